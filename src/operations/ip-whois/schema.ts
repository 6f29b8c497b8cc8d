import { Type } from 'typebox';
import { IP_INPUT_MAX_CHARS } from '../../domain/ip/index.js';
import type { RdapNetworkResult } from '../../domain/rdap/index.js';
import { WhoisHop } from '../dns-whois/schema.js';
import { Nullable } from '../shared/schema.js';
import type { Assert, Describes } from '../shared/shape.js';

const NullableString = Nullable(Type.String());

export const IpWhoisBody = Type.Object({
  ip: Type.Optional(Type.String({ minLength: 1, maxLength: IP_INPUT_MAX_CHARS, description: 'an IPv4 or IPv6 address (give ip or asn)' })),
  asn: Type.Optional(
    Type.Union([Type.Integer({ minimum: 0, maximum: 4294967295 }), Type.String({ minLength: 1, maxLength: 12 })], {
      description: 'an AS number: 15169, "15169" or "AS15169" (give ip or asn)',
    }),
  ),
});

export const IpWhoisResult = Type.Object({
  query: Type.String({ description: 'the address asked (canonical), or "AS15169"' }),
  source: Type.Literal('rdap'),
  rdap_server: Nullable(Type.String({ description: 'the RIR\'s RDAP base URL (bootstrap registry); null when none serves the query' })),
  handle: NullableString,
  name: NullableString,
  type: Nullable(Type.String({ description: 'the RIR\'s allocation type (e.g. DIRECT ALLOCATION, ASSIGNED PA)' })),
  country: Nullable(Type.String({ description: 'ISO 3166 alpha-2' })),
  start_address: NullableString,
  end_address: NullableString,
  cidr: Type.Array(Type.String(), { description: 'the network as CIDR blocks' }),
  asn_range: Nullable(Type.Object({ start: Type.Integer(), end: Type.Integer() }, { description: 'AS numbers: the registered block' })),
  registrant: Nullable(Type.String({ description: 'the registrant\'s organisation (or name)' })),
  abuse_email: NullableString,
  created: Nullable(Type.String({ description: 'ISO 8601' })),
  updated: Nullable(Type.String({ description: 'ISO 8601' })),
  raw: Type.String({ description: 'the RDAP JSON text (bounded)' }),
  hops: Type.Array(WhoisHop),
  error: Nullable(Type.String({ description: 'why fields are missing (no service, not found, a server that failed), or null' })),
});
type _Described = Assert<Describes<typeof IpWhoisResult, RdapNetworkResult>>;
