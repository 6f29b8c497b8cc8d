import type { CityResponse } from 'maxmind';
import { MmdbReader, type MmdbKind } from './mmdb-reader.js';
import type { GeoRecord } from '../../domain/ip/geoip.js';

/** English name when the database has one (MaxMind's always do), else whatever language it has. */
function nameOf(names: { readonly en?: string } | undefined): string | null {
  if (!names) return null;
  if (names.en) return names.en;
  for (const value of Object.values(names)) if (typeof value === 'string' && value) return value;
  return null;
}

const CITY: MmdbKind<CityResponse, GeoRecord> = {
  accepts: /City|Country|Enterprise/i,
  expected: 'a City or Country database',
  record(rec, network) {
    const subdivision = rec.subdivisions?.[0];
    return {
      // No fallback to registered_country: that is where the ISP registered the block, not
      // where the address is (anycast 1.1.1.1 has only registered_country AU). It is kept apart.
      country: nameOf(rec.country?.names),
      country_code: rec.country?.iso_code ?? null,
      region: nameOf(subdivision?.names),
      city: nameOf(rec.city?.names),
      postal_code: rec.postal?.code ?? null,
      latitude: rec.location?.latitude ?? null,
      longitude: rec.location?.longitude ?? null,
      timezone: rec.location?.time_zone ?? null,
      continent: nameOf(rec.continent?.names),
      accuracy_radius: rec.location?.accuracy_radius ?? null,
      network,
      registered_country: nameOf(rec.registered_country?.names),
      registered_country_code: rec.registered_country?.iso_code ?? null,
    };
  },
};

/** A MaxMind City (or Country) database: GeoLite2-City bundled, or the operator's GeoIP2 file. */
export class MmdbCityReader extends MmdbReader<CityResponse, GeoRecord> {
  constructor(db: Buffer) {
    super(db, CITY);
  }

  city(ip: string): GeoRecord | null {
    return this.lookup(ip);
  }
}
