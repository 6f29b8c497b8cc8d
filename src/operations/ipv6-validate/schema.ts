import { Type } from 'typebox';
import type { Ipv6Validation as DomainIpv6Validation } from '../../domain/ipv6/index.js';
import { Nullable } from '../shared/schema.js';
import type { Assert, Describes } from '../shared/shape.js';

/**
 * /ipv6/validate answers 200 for every string (docs/api.md), the empty and the overlong included:
 * saying why a text is not an address is its job. The body size limit bounds the input.
 */
export const Ipv6ValidateBody = Type.Object({ ipv6: Type.String({ description: 'any text; the answer says whether it is an IPv6 address and why not' }) });

export const Ipv6Validation = Type.Object({
  ipv6: Type.String(),
  valid: Type.Boolean(),
  type: Nullable(Type.String({ description: 'public or the special range (loopback, link_local, unique_local, multicast, documentation, …)' })),
  compressed: Nullable(Type.String({ description: 'RFC 5952 text' })),
  expanded: Nullable(Type.String({ description: 'eight groups of four hex digits' })),
  reason: Nullable(Type.String({ description: 'why the text is not an IPv6 address' })),
});
type _Described = Assert<Describes<typeof Ipv6Validation, DomainIpv6Validation>>;
