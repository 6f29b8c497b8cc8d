import { Type } from 'typebox';
import { MAX_PORTS_PER_JOB, MAX_PORTS_PER_SCAN, PORT_SPEC_MAX_CHARS, RANGE_DEFAULT_TIMEOUT_S } from '../../domain/ports/index.js';
import { Host, Port, Timeout } from '../port-scan/schema.js';

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
