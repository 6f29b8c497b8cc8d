import { Type } from 'typebox';
import { MAX_PORT, MIN_PORT } from '../../net/bounds.js';
import { MAX_TIMEOUT_S, MIN_TIMEOUT_S, SCAN_DEFAULT_TIMEOUT_S, type PortResult } from '../../domain/ports/index.js';
import { HOST_INPUT_MAX_CHARS, Nullable } from '../shared/schema.js';
import type { Assert, Describes } from '../shared/shape.js';

/** The fields the three port scans share. */
export const Host = Type.String({ minLength: 1, maxLength: HOST_INPUT_MAX_CHARS, description: 'a hostname, an IPv4 address or an IPv6 address' });
export const Port = Type.Integer({ minimum: MIN_PORT, maximum: MAX_PORT });
export const Timeout = (seconds: number, per: string) =>
  Type.Integer({ minimum: MIN_TIMEOUT_S, maximum: MAX_TIMEOUT_S, default: seconds, description: `connect timeout ${per}, seconds` });

export const PortScanBody = Type.Object({ host: Host, port: Port, timeout: Type.Optional(Timeout(SCAN_DEFAULT_TIMEOUT_S, 'of the port')) });

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
type _Described = Assert<Describes<typeof PortScanItem, PortResult>>;
