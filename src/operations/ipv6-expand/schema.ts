import { Type } from 'typebox';
import type { Ipv6Expansion as DomainIpv6Expansion } from '../../domain/ipv6/index.js';
import type { Assert, Describes } from '../shared/shape.js';

/** Longer than any IPv6 spelling, zone id included, short of a flood. */
const IPV6_INPUT_MAX_CHARS = 256;

const AddressText = Type.String({ minLength: 1, maxLength: IPV6_INPUT_MAX_CHARS, description: 'an IPv6 address, optionally with a zone id (fe80::1%eth0)' });

export const Ipv6Body = Type.Object({ ipv6: AddressText });

export const Ipv6Expansion = Type.Object({ ipv6: Type.String(), expanded: Type.String(), compressed: Type.String() });
type _Described = Assert<Describes<typeof Ipv6Expansion, DomainIpv6Expansion>>;
