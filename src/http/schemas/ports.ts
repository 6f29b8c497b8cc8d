import { Type } from 'typebox';
import { MAX_PORT, MIN_PORT } from '../../net/bounds.js';
import { MAX_PORTS_PER_JOB, MAX_PORTS_PER_SCAN, MAX_TIMEOUT_S, MIN_TIMEOUT_S, PORT_SPEC_MAX_CHARS, PRESET_NAMES, RANGE_DEFAULT_TIMEOUT_S, SCAN_DEFAULT_TIMEOUT_S } from '../../domain/ports/index.js';
import { HOST_INPUT_MAX_CHARS, Nullable } from '../../operations/shared/schema.js';

const Host = Type.String({ minLength: 1, maxLength: HOST_INPUT_MAX_CHARS, description: 'a hostname, an IPv4 address or an IPv6 address' });
const Port = Type.Integer({ minimum: MIN_PORT, maximum: MAX_PORT });
const Timeout = (seconds: number, per: string) =>
  Type.Integer({ minimum: MIN_TIMEOUT_S, maximum: MAX_TIMEOUT_S, default: seconds, description: `connect timeout ${per}, seconds` });

export const PortScanBody = Type.Object({ host: Host, port: Port, timeout: Type.Optional(Timeout(SCAN_DEFAULT_TIMEOUT_S, 'of the port')) });

export const PortScanRangeBody = Type.Object({
  host: Host,
  // The string is checked by the domain's parser, whose messages name the offending entry. The
  // schema holds the job's bound; the synchronous call's is checked by the operation (its 400
  // says to send a job), as one schema serves both.
  ports: Type.Union([
    Type.Array(Port, {
      minItems: 1,
      maxItems: MAX_PORTS_PER_JOB,
      description: `port numbers, at most ${MAX_PORTS_PER_SCAN} in one call and ${MAX_PORTS_PER_JOB} as a job (Prefer: respond-async); duplicates are scanned once and results come sorted by port`,
    }),
    Type.String({
      description: `nmap-style ports and ranges ("22,80,8000-8100"), expanded to the same list and bound: at most ${MAX_PORTS_PER_SCAN} ports in one call, ${MAX_PORTS_PER_JOB} ("1-65535") as a job (Prefer: respond-async); ${PORT_SPEC_MAX_CHARS} characters`,
      examples: ['22,80,443', '1-1024', '22, 80, 8000-8100'],
    }),
  ]),
  timeout: Type.Optional(Timeout(RANGE_DEFAULT_TIMEOUT_S, 'per port')),
});

export const PortScanCommonBody = Type.Object({
  host: Host,
  preset: Type.Enum([...PRESET_NAMES], { description: 'top100 (nmap -F), web, mail or database; case-insensitive' }),
  timeout: Type.Optional(Timeout(RANGE_DEFAULT_TIMEOUT_S, 'per port')),
});

/** The same item for all three endpoints; /port/scan returns one, the others an array. */
export const PortScanItem = Type.Object({
  host: Type.String({ description: 'the host as asked' }),
  ip: Nullable(Type.String({ description: 'the address scanned (resolved and checked once per request); null when the host did not resolve' })),
  port: Type.Integer(),
  open: Type.Boolean(),
  state: Type.Enum(['open', 'closed', 'filtered', 'unresolved'], {
    description: 'open: connected; closed: refused; filtered: no answer within the timeout, or unreachable; unresolved: the host name did not resolve (nothing was sent)',
  }),
  service: Nullable(Type.String({ description: "IANA's service name for the port" })),
  response_time: Nullable(Type.Number({ description: 'ms from connect to the answer (or the timeout); null when nothing was sent' })),
  queued_ms: Nullable(
    Type.Number({ description: 'ms this port waited for a connection slot before its connect (not part of response_time); null when nothing was sent' }),
  ),
  reason: Type.String({ description: 'connected, connection refused, no answer within N s, host unreachable, or why the host did not resolve' }),
  error: Nullable(
    Type.String({
      description: 'when unresolved, the DNS answer: NXDOMAIN, NODATA (no address record), TIMEOUT, SERVFAIL, REFUSED, UNREACHABLE (no DNS server could be reached) or ERROR; null otherwise',
      examples: ['NXDOMAIN'],
    }),
  ),
});
