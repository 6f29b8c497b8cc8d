import type { AsnResponse, IspResponse, Reader } from 'maxmind';
import { cidrOf } from './address.js';
import { buildDateOf, lookupMmdb, openMmdb, readMmdbSync } from './mmdb-file.js';
import type { AsnRecord } from '../../domain/ip/geoip.js';

/** GeoIP2-ISP records are ASN records plus `isp`/`organization`, each of which may be absent. */
type AsnOrIsp = Partial<AsnResponse> & Partial<Pick<IspResponse, 'isp' | 'organization'>>;

/** An operator's GeoLite2-ASN, GeoIP2-ASN or GeoIP2-ISP file (NETDIAG_GEOIP_ASN_DB). */
export class MmdbAsnReader {
  readonly buildDate: string | null;
  readonly databaseType: string;

  private constructor(private readonly reader: Reader<AsnOrIsp>) {
    this.buildDate = buildDateOf(reader);
    this.databaseType = reader.metadata.databaseType;
  }

  /** `db` is the whole, inflated .mmdb file (see inflateMmdb). */
  static fromBuffer(db: Buffer): MmdbAsnReader {
    return new MmdbAsnReader(openMmdb<AsnOrIsp>(db, /ASN|ISP|Enterprise/i, 'an ASN or ISP database'));
  }

  static openSync(path: string): MmdbAsnReader {
    return MmdbAsnReader.fromBuffer(readMmdbSync(path));
  }

  asn(ip: string): AsnRecord | null {
    const found = lookupMmdb(this.reader, ip);
    if (!found) return null;
    const { rec, address, prefix } = found;
    // An ISP record without an AS number (some mobile ranges) cannot fill AsnRecord.number;
    // inventing AS0 would be worse than no answer.
    if (typeof rec.autonomous_system_number !== 'number') return null;
    return {
      number: rec.autonomous_system_number,
      organization: rec.autonomous_system_organization || rec.organization || rec.isp || null,
      network: cidrOf(address, prefix),
      isp: rec.isp || null,
    };
  }
}
