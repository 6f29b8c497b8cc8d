import ipaddr from 'ipaddr.js';
import type { GeoLookup, ProxyLocation } from './types.js';

const NOWHERE: ProxyLocation = { country: null, country_code: null, city: null, region: null, isp: null };

/**
 * Where the proxy exits: the judge's view of the exit address through the GeoIP reader.
 * Addresses outside public unicast (loopback, private, ...) have no location, and the reader is
 * not even asked (so it never loads its data for them).
 */
export function locate(geo: GeoLookup | null, exitIp: string | null): ProxyLocation {
  if (!geo || !exitIp || !ipaddr.isValid(exitIp)) return { ...NOWHERE };
  if (ipaddr.process(exitIp).range() !== 'unicast') return { ...NOWHERE };
  const city = geo.city(exitIp);
  const asn = geo.asn(exitIp);
  return {
    country: city?.country ?? null,
    country_code: city?.country_code ?? null,
    city: city?.city ?? null,
    region: city?.region ?? null,
    isp: asn?.isp ?? asn?.organization ?? null,
  };
}
