import { Type } from 'typebox';
import { MAX_PORT, MIN_PORT } from '../../net/bounds.js';
import { HOST_INPUT_MAX_CHARS, Nullable } from './common.js';

/** Longer than any IPv6 spelling, zone id included, short of a flood. */
const IPV6_INPUT_MAX_CHARS = 256;

const AddressText = Type.String({ minLength: 1, maxLength: IPV6_INPUT_MAX_CHARS, description: 'an IPv6 address, optionally with a zone id (fe80::1%eth0)' });

export const Ipv6Body = Type.Object({ ipv6: AddressText });

/**
 * /ipv6/validate answers 200 for every string (docs/api.md), the empty and the overlong included:
 * saying why a text is not an address is its job. The body size limit bounds the input.
 */
export const Ipv6ValidateBody = Type.Object({ ipv6: Type.String({ description: 'any text; the answer says whether it is an IPv6 address and why not' }) });

export const Ipv6TestBody = Type.Object({
  target: Type.String({ minLength: 1, maxLength: HOST_INPUT_MAX_CHARS, description: 'a hostname or IPv6 address' }),
  port: Type.Optional(Type.Integer({ minimum: MIN_PORT, maximum: MAX_PORT, description: 'try only this port instead of 443 then 80' })),
});

export const Ipv6Validation = Type.Object({
  ipv6: Type.String(),
  valid: Type.Boolean(),
  type: Nullable(Type.String({ description: 'public or the special range (loopback, link_local, unique_local, multicast, documentation, …)' })),
  compressed: Nullable(Type.String({ description: 'RFC 5952 text' })),
  expanded: Nullable(Type.String({ description: 'eight groups of four hex digits' })),
  reason: Nullable(Type.String({ description: 'why the text is not an IPv6 address' })),
});

export const Ipv6Expansion = Type.Object({ ipv6: Type.String(), expanded: Type.String(), compressed: Type.String() });

export const Ipv6TestResult = Type.Object({
  target: Type.String(),
  addresses: Type.Array(Type.String(), { description: "the target's IPv6 addresses" }),
  reachable: Type.Boolean(),
  address: Nullable(Type.String()),
  port: Nullable(Type.Integer()),
  response_time: Nullable(Type.Number({ description: 'TCP connect time, ms' })),
  error: Nullable(Type.String()),
});
