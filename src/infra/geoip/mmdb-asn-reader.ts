import { Reader, type AsnResponse, type IspResponse } from 'maxmind';
import { cidrOf, toLookupAddress } from './address.js';
import { buildDateOf, LruCache, MMDB_CACHE_ENTRIES, readMmdbSync } from './mmdb-file.js';
import type { AsnRecord } from './types.js';

/** GeoIP2-ISP records are ASN records plus `isp`/`organization`, each of which may be absent. */
type AsnOrIsp = Partial<AsnResponse> & Partial<Pick<IspResponse, 'isp' | 'organization'>>;

/** An operator's GeoLite2-ASN, GeoIP2-ASN or GeoIP2-ISP file (NETDIAG_GEOIP_ASN_DB). */
export class MmdbAsnReader {
  readonly buildDate: string | null;
  readonly databaseType: string;

  private constructor(private readonly reader: Reader<AsnOrIsp>) {
    this.buildDate = buildDateOf(reader);
    this.databaseType = reader.metadata.databaseType;
    // A City file given as the ASN file would open fine and answer null forever: refuse it.
    if (!/ASN|ISP|Enterprise/i.test(this.databaseType)) {
      throw new Error(`database type is ${this.databaseType}, expected an ASN or ISP database`);
    }
  }

  /** `db` is the whole, inflated .mmdb file (see inflateMmdb). */
  static fromBuffer(db: Buffer): MmdbAsnReader {
    return new MmdbAsnReader(new Reader<AsnOrIsp>(db, { cache: new LruCache(MMDB_CACHE_ENTRIES) }));
  }

  static openSync(path: string): MmdbAsnReader {
    return MmdbAsnReader.fromBuffer(readMmdbSync(path));
  }

  asn(ip: string): AsnRecord | null {
    const address = toLookupAddress(ip);
    // An IPv4-only database walked with IPv6 bits would answer for the wrong address.
    if (!address || (address.version === 6 && this.reader.metadata.ipVersion === 4)) return null;
    const [rec, prefix] = this.reader.getWithPrefixLength(address.text);
    // An ISP record without an AS number (some mobile ranges) cannot fill AsnRecord.number;
    // inventing AS0 would be worse than no answer.
    if (!rec || typeof rec.autonomous_system_number !== 'number') return null;
    return {
      number: rec.autonomous_system_number,
      organization: rec.autonomous_system_organization || rec.organization || rec.isp || null,
      network: cidrOf(address, prefix),
      isp: rec.isp || null,
    };
  }
}
