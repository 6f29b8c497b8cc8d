import { readFileSync } from 'node:fs';

/**
 * "Is this address in a hosting/cloud/CDN network?" from the shipped list of ASNs
 * (data/hosting-asns.json), then from keywords in the AS organisation name, so that small
 * hosters nobody listed ("Foo Hosting Ltd", "Bar Cloud Datacenter") are still recognised.
 */

export type HostingCategory = 'cloud' | 'hosting' | 'cdn';

export interface HostingAsn {
  asn: number;
  name: string;
  provider: string;
  category: HostingCategory;
}

export interface HostingMatch {
  /** `asn`: the number is in the list; `keyword`: the organisation name matched a keyword. */
  by: 'asn' | 'keyword';
  provider: string | null;
  category: HostingCategory | null;
  keyword: string | null;
}

export interface HostingList {
  match(asn: number | null, organization: string | null): HostingMatch | null;
  readonly size: number;
}

interface HostingFile {
  keywords: string[];
  asns: HostingAsn[];
}

const CATEGORIES: readonly string[] = ['cloud', 'hosting', 'cdn'];

function parseHostingFile(value: unknown, where: string): HostingFile {
  const bad = (why: string): Error => new Error(`${where}: ${why}`);
  if (typeof value !== 'object' || value === null) throw bad('not a JSON object');
  const { keywords, asns } = value as { keywords?: unknown; asns?: unknown };
  if (!Array.isArray(keywords) || !keywords.every((k) => typeof k === 'string')) throw bad('"keywords" must be an array of strings');
  if (!Array.isArray(asns)) throw bad('"asns" must be an array');
  const entries = asns.map((entry: unknown, i): HostingAsn => {
    const e = entry as Partial<Record<keyof HostingAsn, unknown>>;
    if (typeof e.asn !== 'number' || !Number.isInteger(e.asn) || e.asn <= 0) throw bad(`asns[${i}].asn must be a positive integer`);
    if (typeof e.name !== 'string' || typeof e.provider !== 'string') throw bad(`asns[${i}] needs "name" and "provider" strings`);
    if (typeof e.category !== 'string' || !CATEGORIES.includes(e.category)) throw bad(`asns[${i}].category must be one of ${CATEGORIES.join(', ')}`);
    return { asn: e.asn, name: e.name, provider: e.provider, category: e.category as HostingCategory };
  });
  return { keywords: keywords as string[], asns: entries };
}

export function createHostingList(file: { keywords: string[]; asns: HostingAsn[] }): HostingList {
  const byAsn = new Map(file.asns.map((e) => [e.asn, e]));
  const patterns = file.keywords.map((k) => ({ keyword: k, re: new RegExp(k, 'i') }));
  return {
    size: byAsn.size,
    match(asn, organization) {
      const listed = asn === null ? undefined : byAsn.get(asn);
      if (listed) return { by: 'asn', provider: listed.provider, category: listed.category, keyword: null };
      if (!organization) return null;
      const hit = patterns.find((p) => p.re.test(organization));
      return hit ? { by: 'keyword', provider: null, category: null, keyword: hit.keyword } : null;
    },
  };
}

export const HOSTING_ASNS_FILE = new URL('./data/hosting-asns.json', import.meta.url);

let shipped: HostingList | undefined;

/** The shipped list, read once on first use (it is small). */
export function hostingList(): HostingList {
  shipped ??= createHostingList(parseHostingFile(JSON.parse(readFileSync(HOSTING_ASNS_FILE, 'utf8')), HOSTING_ASNS_FILE.pathname));
  return shipped;
}
