/**
 * The GeoIP reader contract. It returns our own types, never the mmdb library's, so the
 * domain and its tests do not care whether the data came from an mmdb file, a CSV or a fake
 * (the idea of mpolden/echoip's geo.Reader).
 */

export interface GeoRecord {
  country: string | null;
  country_code: string | null;
  /** First-level subdivision (state, province, region). */
  region: string | null;
  city: string | null;
  postal_code: string | null;
  latitude: number | null;
  longitude: number | null;
  timezone: string | null;
  continent: string | null;
  /** Kilometres, as MaxMind states it. */
  accuracy_radius: number | null;
  /** CIDR the record covers. */
  network: string | null;
  /** Where the block was registered (may differ from where it is used); MaxMind data only. */
  registered_country?: string | null;
  registered_country_code?: string | null;
}

export interface AsnRecord {
  number: number;
  organization: string | null;
  /** CIDR the record covers: for a CSV range, the largest CIDR inside the range that holds the address. */
  network: string | null;
  /** Only ISP-type databases (GeoIP2-ISP) know the ISP apart from the AS organisation. */
  isp?: string | null;
}

/** Attribution lines the licences of the bundled data ask for (GeoReaderInfo.sources, the OpenAPI document). */
export const GEOIP_ATTRIBUTION = {
  geolite2:
    'This product includes GeoLite2 data created by MaxMind, available from https://www.maxmind.com (licensed under CC BY-SA 4.0, https://creativecommons.org/licenses/by-sa/4.0/).',
  ipLocationDbAsn:
    'IP to ASN data: RouteViews (https://www.routeviews.org), the NRO (https://www.nro.net) and the IP to ASN Lite database by DB-IP (https://db-ip.com), licensed under CC BY 4.0 (https://creativecommons.org/licenses/by/4.0/); merged and modified by ip-location-db (https://github.com/sapics/ip-location-db).',
  dbIpLink: 'IP Geolocation by DB-IP: https://db-ip.com',
} as const;

export interface GeoReaderInfo {
  /** ISO date (YYYY-MM-DD) the city data was built, null when no city data is loaded. */
  cityBuildDate: string | null;
  asnBuildDate: string | null;
  /** Attribution lines the data licences ask for; show them wherever results are shown. */
  sources: string[];
}

export interface GeoReader {
  city(ip: string): GeoRecord | null;
  asn(ip: string): AsnRecord | null;
  readonly info: GeoReaderInfo;
}

/** A reader whose data is read once, at start; lookups before load() finishes still work (see index.ts). */
export interface LoadableGeoReader extends GeoReader {
  load(): Promise<void>;
}
