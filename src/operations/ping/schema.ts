import { Type } from 'typebox';
import { PING_DEFAULT_PACKETS, PING_MAX_PACKETS, PING_MIN_PACKETS, type IcmpPingResult as DomainIcmpPingResult } from '../../domain/path/index.js';
import { HOST_INPUT_MAX_CHARS, Nullable, NullableMs } from '../shared/schema.js';
import type { Assert, Describes } from '../shared/shape.js';

/** The target of a path tool: a name or an address, checked by the target policy before anything runs. */
export const PathTarget = Type.String({ minLength: 1, maxLength: HOST_INPUT_MAX_CHARS, description: 'a hostname, an IPv4 address or an IPv6 address' });

/** 4 or 6: an integer of two values (a number to every surface: a number box, `--ip-version 6`). */
export const IpVersion = Type.Optional(
  Type.Unsafe<4 | 6>({ type: 'integer', enum: [4, 6], description: 'probe over IPv4 (4) or IPv6 (6) only; default: the first address the name resolves to (IPv4 first)' }),
);

export const IcmpPingBody = Type.Object({
  target: PathTarget,
  packets: Type.Optional(
    Type.Integer({ minimum: PING_MIN_PACKETS, maximum: PING_MAX_PACKETS, default: PING_DEFAULT_PACKETS, description: 'echo requests to send, 200 ms apart' }),
  ),
  ip_version: IpVersion,
});

const Ms = (description: string) => NullableMs(description, 'when no reply came');

export const PingSample = Nullable(
  Type.Object(
    {
      seq: Type.Integer({ description: 'icmp_seq, from 1' }),
      ttl: Type.Integer({ description: "the reply's TTL (IPv6: hop limit) as it arrived" }),
      rtt: Type.Number({ description: 'round-trip time, ms' }),
    },
    { description: 'the first reply to one echo request; null when none came' },
  ),
);

export const IcmpPingResult = Type.Object({
  target: Type.String({ description: 'the target as asked' }),
  address: Nullable(Type.String({ description: 'the checked address every echo went to; null when the target did not resolve' })),
  protocol: Type.Literal('icmp'),
  sent: Type.Integer({ description: 'echo requests sent (0 when the target did not resolve)' }),
  received: Type.Integer({ description: 'echo requests answered (a duplicate reply is not counted again)' }),
  loss_percent: Type.Number({ description: '(sent - received) x 100 / sent, two decimals; 100 when nothing was sent' }),
  min: Ms('fastest reply'),
  avg: Ms('mean reply'),
  max: Ms('slowest reply'),
  mdev: Ms("ping's mdev: the square root of (mean of squares - square of the mean)"),
  samples: Type.Array(PingSample, { description: 'one per echo request, in order' }),
  error: Nullable(Type.String({ description: 'why nothing was measured (the target did not resolve, no route to it), else null' })),
});
type _Described = Assert<Describes<typeof IcmpPingResult, DomainIcmpPingResult>>;
