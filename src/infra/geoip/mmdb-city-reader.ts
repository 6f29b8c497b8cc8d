import type { CityResponse, Reader } from 'maxmind';
import { cidrOf } from './address.js';
import { buildDateOf, lookupMmdb, nameOf, openMmdb, readMmdbSync } from './mmdb-file.js';
import type { GeoRecord } from '../../domain/ip/geoip.js';

/** A MaxMind City (or Country) database: GeoLite2-City bundled, or the operator's GeoIP2 file. */
export class MmdbCityReader {
  readonly buildDate: string | null;
  readonly databaseType: string;

  private constructor(private readonly reader: Reader<CityResponse>) {
    this.buildDate = buildDateOf(reader);
    this.databaseType = reader.metadata.databaseType;
  }

  /** `db` is the whole, inflated .mmdb file (see inflateMmdb). */
  static fromBuffer(db: Buffer): MmdbCityReader {
    return new MmdbCityReader(openMmdb<CityResponse>(db, /City|Country|Enterprise/i, 'a City or Country database'));
  }

  static openSync(path: string): MmdbCityReader {
    return MmdbCityReader.fromBuffer(readMmdbSync(path));
  }

  city(ip: string): GeoRecord | null {
    const found = lookupMmdb(this.reader, ip);
    if (!found) return null;
    const { rec, address, prefix } = found;
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
      network: cidrOf(address, prefix),
      registered_country: nameOf(rec.registered_country?.names),
      registered_country_code: rec.registered_country?.iso_code ?? null,
    };
  }
}
