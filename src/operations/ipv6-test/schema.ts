import { Type } from 'typebox';
import type { Ipv6TestResult as DomainIpv6TestResult } from '../../domain/ipv6/index.js';
import { MAX_PORT, MIN_PORT } from '../../net/bounds.js';
import { HOST_INPUT_MAX_CHARS, Nullable } from '../shared/schema.js';
import type { Assert, Describes } from '../shared/shape.js';

export const Ipv6TestBody = Type.Object({
  target: Type.String({ minLength: 1, maxLength: HOST_INPUT_MAX_CHARS, description: 'a hostname or IPv6 address' }),
  port: Type.Optional(Type.Integer({ minimum: MIN_PORT, maximum: MAX_PORT, description: 'try only this port instead of 443 then 80' })),
});

export const Ipv6TestResult = Type.Object({
  target: Type.String(),
  addresses: Type.Array(Type.String(), { description: "the target's IPv6 addresses" }),
  reachable: Type.Boolean(),
  address: Nullable(Type.String()),
  port: Nullable(Type.Integer()),
  response_time: Nullable(Type.Number({ description: 'TCP connect time, ms' })),
  error: Nullable(Type.String()),
});
type _Described = Assert<Describes<typeof Ipv6TestResult, DomainIpv6TestResult>>;
