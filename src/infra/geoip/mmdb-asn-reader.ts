import type { AsnResponse, IspResponse } from 'maxmind';
import { MmdbReader, type MmdbKind } from './mmdb-reader.js';
import type { AsnRecord } from '../../domain/ip/geoip.js';

/** GeoIP2-ISP records are ASN records plus `isp`/`organization`, each of which may be absent. */
type AsnOrIsp = Partial<AsnResponse> & Partial<Pick<IspResponse, 'isp' | 'organization'>>;

const ASN: MmdbKind<AsnOrIsp, AsnRecord> = {
  accepts: /ASN|ISP|Enterprise/i,
  expected: 'an ASN or ISP database',
  record(rec, network) {
    // An ISP record without an AS number (some mobile ranges) cannot fill AsnRecord.number;
    // inventing AS0 would be worse than no answer.
    if (typeof rec.autonomous_system_number !== 'number') return null;
    return {
      number: rec.autonomous_system_number,
      organization: rec.autonomous_system_organization || rec.organization || rec.isp || null,
      network,
      isp: rec.isp || null,
    };
  },
};

/** An operator's GeoLite2-ASN, GeoIP2-ASN or GeoIP2-ISP file (NETDIAG_GEOIP_ASN_DB). */
export class MmdbAsnReader extends MmdbReader<AsnOrIsp, AsnRecord> {
  constructor(db: Buffer) {
    super(db, ASN);
  }

  asn(ip: string): AsnRecord | null {
    return this.lookup(ip);
  }
}
