import { Type } from 'typebox';
import { MTR_DEFAULT_PACKETS, MTR_MAX_PACKETS, MTR_MIN_PACKETS, type MtrResult as DomainMtrResult } from '../../domain/path/index.js';
import { Nullable, NullableMs } from '../shared/schema.js';
import type { Assert, Describes } from '../shared/shape.js';
import { IpVersion, PathTarget } from '../ping/schema.js';
import { hopIdentity, maxHopsField, PathProtocol, pathPortField, pathProtocolField } from '../traceroute/schema.js';

export const MtrBody = Type.Object({
  target: PathTarget,
  protocol: pathProtocolField,
  port: pathPortField,
  packets: Type.Optional(Type.Integer({ minimum: MTR_MIN_PACKETS, maximum: MTR_MAX_PACKETS, default: MTR_DEFAULT_PACKETS, description: 'probes per hop, one a second' })),
  max_hops: maxHopsField,
  ip_version: IpVersion,
});

const Ms = (description: string) => NullableMs(description, 'when nothing came back');

export const MtrHop = Type.Object({
  ...hopIdentity,
  sent: Type.Integer({ description: 'probes sent with this TTL' }),
  received: Type.Integer({ description: 'probes answered' }),
  loss_percent: Type.Number({ description: '(sent - received) x 100 / sent, two decimals' }),
  last: Ms('the last round trip'),
  best: Ms('the fastest'),
  avg: Ms('the mean'),
  worst: Ms('the slowest'),
  stdev: Ms('the standard deviation'),
});

export const MtrResult = Type.Object({
  target: Type.String({ description: 'the target as asked' }),
  address: Nullable(Type.String({ description: 'the checked address probed; null when the target did not resolve' })),
  protocol: PathProtocol,
  hops: Type.Array(MtrHop, { description: "mtr's report, one per hop" }),
  error: Nullable(Type.String({ description: 'why nothing was measured (no address, no route), else null' })),
});
type _Described = Assert<Describes<typeof MtrResult, DomainMtrResult>>;
