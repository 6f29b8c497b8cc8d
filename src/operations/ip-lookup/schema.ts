import { Type, type TProperties } from 'typebox';
import { IP_INPUT_MAX_CHARS, RISK_MAX, RISK_POINTS, type IpLookupResult as DomainIpLookupResult } from '../../domain/ip/index.js';
import { Nullable } from '../shared/schema.js';
import type { Assert, Describes } from '../shared/shape.js';

const IpText = Type.String({ minLength: 1, maxLength: IP_INPUT_MAX_CHARS, description: 'an IPv4 or IPv6 address' });

/** The lookup's options, which a bulk call takes too. */
export const IpFlags = {
  detailed: Type.Optional(Type.Boolean({ default: false, description: 'add PTR hostname, continent, accuracy radius, networks' })),
  security_check: Type.Optional(Type.Boolean({ default: false, description: 'add Tor exit, DNSBL, hosting and bogon checks with a risk score' })),
};

export const IpLookupBody = Type.Object({ ip: IpText, ...IpFlags });

const NullableString = Nullable(Type.String());
const NullableNumber = Nullable(Type.Number());

const Location = Type.Object({
  country: NullableString,
  country_code: NullableString,
  region: NullableString,
  city: NullableString,
  postal_code: NullableString,
  latitude: NullableNumber,
  longitude: NullableNumber,
  timezone: NullableString,
  isp: NullableString,
  continent: Type.Optional(NullableString),
  accuracy_radius: Type.Optional(Nullable(Type.Integer({ description: 'km' }))),
  network: Type.Optional(NullableString),
  registered_country: Type.Optional(NullableString),
  registered_country_code: Type.Optional(NullableString),
});

const Asn = Type.Object({ number: Nullable(Type.Integer()), organization: NullableString, network: NullableString });

const Security = Type.Object({
  is_tor: Nullable(Type.Boolean({ description: 'null: unknown (the list did not answer, or IPv6)' })),
  is_proxy: Nullable(Type.Boolean()),
  is_hosting: Type.Boolean(),
  is_bogon: Type.Boolean(),
  blacklists: Type.Array(Type.Object({ list: Type.String(), listed: Nullable(Type.Boolean()), response: Type.Array(Type.String()) })),
  risk_score: Type.Integer({
    minimum: 0,
    maximum: RISK_MAX,
    description:
      `points for each signal that is true, summed and capped at ${RISK_MAX}: Tor exit ${RISK_POINTS.torExit}, proxy listing ${RISK_POINTS.proxy}, ` +
      `each DNSBL listing ${RISK_POINTS.perListing} (at most ${RISK_POINTS.listingsMax} together), hosting network ${RISK_POINTS.hosting}, bogon ${RISK_POINTS.bogon}; ` +
      'unknown (null) signals add nothing, so the score is a lower bound when a list did not answer',
  }),
  threats: Type.Array(Type.String()),
});

/** The fields of a lookup's result, which a bulk item has too. */
export const ipResultFields = {
  ip: Type.String(),
  version: Type.Integer({ description: '4 or 6' }),
  type: Type.String({ description: 'public, private, loopback, link_local, unique_local, cgnat, multicast, documentation, benchmarking, unspecified, broadcast or reserved' }),
  hostname: NullableString,
  location: Location,
  asn: Asn,
  range: Type.Optional(NullableString),
  security: Type.Optional(Security),
} satisfies TProperties;

export const IpLookupResult = Type.Object(ipResultFields);
type _Described = Assert<Describes<typeof IpLookupResult, DomainIpLookupResult>>;
