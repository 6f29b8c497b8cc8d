import { Type } from 'typebox';
import { MAX_PORT, MIN_PORT } from '../../net/bounds.js';
import {
  PING_DEFAULT_COUNT,
  PING_DEFAULT_PORT,
  PING_DEFAULT_TIMEOUT_S,
  PING_INTERVAL_MS,
  PING_MAX_COUNT,
  PING_MAX_TIMEOUT_S,
  PING_MIN_COUNT,
  PING_MIN_TIMEOUT_S,
  type TcpPingResult as DomainTcpPingResult,
} from '../../domain/ping/index.js';
import { HOST_INPUT_MAX_CHARS, Nullable, NullableMs } from '../shared/schema.js';
import type { Assert, Describes } from '../shared/shape.js';

export const TcpPingBody = Type.Object({
  host: Type.String({ minLength: 1, maxLength: HOST_INPUT_MAX_CHARS, description: 'a hostname, an IPv4 address or an IPv6 address' }),
  port: Type.Optional(Type.Integer({ minimum: MIN_PORT, maximum: MAX_PORT, default: PING_DEFAULT_PORT, description: 'the TCP port to connect to' })),
  count: Type.Optional(
    Type.Integer({ minimum: PING_MIN_COUNT, maximum: PING_MAX_COUNT, default: PING_DEFAULT_COUNT, description: `connects to make, started ${PING_INTERVAL_MS} ms apart` }),
  ),
  timeout: Type.Optional(
    Type.Integer({ minimum: PING_MIN_TIMEOUT_S, maximum: PING_MAX_TIMEOUT_S, default: PING_DEFAULT_TIMEOUT_S, description: 'connect timeout of each probe, seconds' }),
  ),
});

const Ms = (description: string) => NullableMs(description, 'when no probe was received');

export const TcpPingResult = Type.Object({
  host: Type.String({ description: 'the host as asked' }),
  ip: Nullable(Type.String({ description: 'the one address every probe went to (resolved and checked once); null when the host did not resolve' })),
  port: Type.Integer(),
  sent: Type.Integer({ description: 'connects started (0 when the host did not resolve)' }),
  received: Type.Integer({
    description: 'handshakes completed. A refused connect (RST: nothing listens) is a lost probe, like one that times out or is unreachable',
  }),
  loss_percent: Type.Number({ description: '(sent - received) x 100 / sent, two decimals; 100 when nothing was sent' }),
  min: Ms('fastest handshake'),
  avg: Ms('mean handshake'),
  max: Ms('slowest handshake'),
  mdev: Ms("ping's mdev: the square root of (mean of squares - square of the mean) of the received samples"),
  samples: Type.Array(Nullable(Type.Number()), {
    description: 'each probe in the order sent: its handshake time in ms, or null when it was lost (refused, timed out, unreachable)',
  }),
  outcomes: Type.Array(Type.Enum(['connected', 'refused', 'timeout', 'unreachable']), { description: 'what each probe met, in the same order' }),
  error: Nullable(Type.String({ description: 'why nothing was sent (the host did not resolve), else null' })),
});
type _Described = Assert<Describes<typeof TcpPingResult, DomainTcpPingResult>>;
