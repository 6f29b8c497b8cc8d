import { toIsoDate } from './dates.js';
import { WHOIS_MAX_LINE_CHARS, WHOIS_MAX_PARSED_CHARS } from './defaults.js';
import { DNS_MAX_NAME_LENGTH } from '../../net/bounds.js';
import { parseReferral, formatWhoisServer } from './referral.js';
import { keyLine, withoutTrailingTag, withoutUrls } from './text.js';
import type { WhoisFields } from './types.js';

/**
 * WHOIS answers are free text with no schema. Two layouts cover the registries we support:
 *
 *   flat `Key: value` lines          ICANN (.com/.net/.org, registrars), DENIC, RIPE-style (.ru)
 *   indented blocks                  Nominet (.uk), EURid (.eu):
 *     Relevant dates:
 *         Registered on: 01-Aug-1995
 *
 * entries() reads both into key/value pairs (a block's lines become `header` entries, or
 * `header sub-key` plus `sub-key` entries), and parseWhois() picks the fields out by a table
 * of the names registries use for each.
 *
 * The text comes from servers anyone can run (every referral is followed), so nothing here may
 * take more than linear time in it: keys, URLs and tags are read by the scanners of text.ts,
 * the regular expressions left are proven linear (test/security/regex-linear.test.ts), and
 * only the first WHOIS_MAX_PARSED_CHARS of an answer, WHOIS_MAX_LINE_CHARS of a line, are read.
 */

export interface WhoisEntry {
  /** Lowercase, single spaces: "registry expiry date". */
  key: string;
  value: string;
}

/** Blocks about people: their sub-keys (Name:, Email:) must not pass for the domain's own. */
const CONTACT_BLOCK = /^(registrant|admin|administrative|tech|technical|billing|contact|holder|owner|onsite|reseller|zone)\b/;

function normKey(key: string): string {
  return key.toLowerCase().replace(/[_\s]+/g, ' ').trim();
}

function indentOf(line: string): number {
  return /^\s*/.exec(line)![0].replace(/\t/g, '        ').length;
}

/** The answer's lines, each cut at WHOIS_MAX_LINE_CHARS, from its first WHOIS_MAX_PARSED_CHARS. */
function linesOf(text: string): string[] {
  const lines = text.slice(0, WHOIS_MAX_PARSED_CHARS).replace(/\r\n?/g, '\n').split('\n');
  for (let i = 0; i < lines.length; i++) if (lines[i]!.length > WHOIS_MAX_LINE_CHARS) lines[i] = lines[i]!.slice(0, WHOIS_MAX_LINE_CHARS);
  return lines;
}

export function entries(text: string): WhoisEntry[] {
  const lines = linesOf(text);
  const out: WhoisEntry[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    // ICANN answers end their data with ">>> Last update of WHOIS database: ... <<<"; legal text follows.
    if (/^\s*>>>/.test(line)) break;
    if (line.trim() === '' || /^\s*[%#]/.test(line)) continue;
    const m = keyLine(line);
    if (!m) continue;
    const indent = indentOf(m.indent);
    const key = normKey(m.key);
    const value = m.value.trim();
    if (value !== '') {
      out.push({ key, value });
      continue;
    }
    // "Key:" alone: a block when the lines below are indented deeper, up to a blank line.
    let j = i + 1;
    while (j < lines.length && lines[j]!.trim() !== '' && indentOf(lines[j]!) > indent) {
      const inner = lines[j]!;
      const sub = keyLine(inner);
      if (sub && sub.value.trim() !== '') {
        const subKey = normKey(sub.key);
        const subValue = sub.value.trim();
        out.push({ key: `${key} ${subKey}`, value: subValue });
        if (!CONTACT_BLOCK.test(key)) out.push({ key: subKey, value: subValue });
      } else {
        out.push({ key, value: inner.trim() });
      }
      j++;
    }
    i = j - 1;
  }
  return out;
}

/** The names registries give each field, most specific first. */
const FIELDS = {
  domain: ['domain name', 'domain', 'domainname', 'domain-name'],
  registrar: ['registrar', 'sponsoring registrar', 'registrar name', 'registrar organization', 'registrar-name'],
  registrar_url: ['registrar url', 'registrar website', 'registrar web', 'referral url', 'registrar-url'],
  whois_server: ['registrar whois server', 'whois server', 'whois'],
  creation_date: [
    'creation date',
    'created',
    'created on',
    'created date',
    'registered on',
    'registration date',
    'registration time',
    'domain registration date',
    'domain create date',
    'record created',
    'registered',
    'commencement date',
  ],
  updated_date: [
    'updated date',
    'last updated',
    'last updated on',
    'last modified',
    'last-modified',
    'last update',
    'last-update',
    'changed',
    'modified',
    'updated',
    'domain last updated date',
  ],
  expiration_date: [
    'registry expiry date',
    'registry expiration date',
    'expiry date',
    'expiration date',
    'registrar registration expiration date',
    'expires',
    'expires on',
    'expire date',
    'expiration time',
    'paid-till',
    'valid until',
    'renewal date',
    'domain expiration date',
  ],
  name_servers: ['name server', 'name servers', 'nameserver', 'nameservers', 'nserver', 'name-server', 'ns', 'dns', 'domain servers in listed order'],
  status: ['domain status', 'status', 'state', 'registration status', 'eppstatus', 'domain-status'],
  dnssec: ['dnssec', 'dnssec status'],
  /** Any of these with a value means the zone is signed. */
  dnssecData: ['dnssec ds data', 'ds rdata', 'ds-rdata', 'dnskey', 'keys', 'ds record'],
} as const;

/**
 * Answers that say the domain is not registered. Matched line by line (comment lines included:
 * .fr writes "%% NOT FOUND"), anchored so that legal text around a real record cannot match.
 */
const NOT_FOUND = [
  /^\s*no match for\b/i,
  /^\s*(?:%+\s*)?not found\b/i,
  /^\s*no entries found\b/i,
  /^\s*no data found\b/i,
  /^\s*no matching record/i,
  /^\s*domain not found\b/i,
  /^\s*the queried object does not exist/i,
  /^\s*this domain name has not been registered/i,
  /^\s*the domain has not been registered/i,
  /^\s*object does not exist/i,
  /^\s*no object found/i,
  /^\s*status:\s*(free|available)\s*$/i,
  /^\s*domain (status|state):\s*(free|available|no object found)\s*$/i,
];

function first(es: readonly WhoisEntry[], keys: readonly string[]): string | null {
  for (const key of keys) {
    const hit = es.find((e) => e.key === key && !/^redacted\b/i.test(e.value));
    if (hit) return hit.value;
  }
  return null;
}

function all(es: readonly WhoisEntry[], keys: readonly string[]): string[] {
  const wanted = new Set<string>(keys);
  return es.filter((e) => wanted.has(e.key)).map((e) => e.value);
}

/** At most DNS_MAX_NAME_LENGTH characters (checked apart: a look-ahead would keep the pattern from being proven linear). */
const HOSTNAME = /^[a-z0-9_](?:[a-z0-9_-]*[a-z0-9])?(?:\.[a-z0-9_](?:[a-z0-9_-]*[a-z0-9])?)+$/;

function nameServers(values: readonly string[]): string[] {
  // A Set, not out.includes(): an answer may hold thousands of name server lines.
  const out = new Set<string>();
  for (const value of values) {
    // "ns1.example.net. 192.0.2.53" (DENIC glue), "ns1.example.net 2001:db8::53" (Nominet), "NS1.EXAMPLE.COM"
    const host = (value.split(/[\s,]+/)[0] ?? '').toLowerCase().replace(/\.$/, '');
    if (host.length <= DNS_MAX_NAME_LENGTH && HOSTNAME.test(host)) out.add(host);
  }
  return [...out];
}

function statuses(values: readonly string[]): string[] {
  const out = new Set<string>();
  for (const value of values) {
    // "clientTransferProhibited https://icann.org/epp#clientTransferProhibited", "ok (https://...)"
    const cleaned = withoutUrls(value).trim();
    // "REGISTERED, DELEGATED, VERIFIED" (.ru) is three states; the test leaves no white space but around commas.
    const parts = /^[A-Za-z_-]+(\s*,\s*[A-Za-z_-]+)+$/.test(cleaned) ? cleaned.split(',').map((p) => p.trim()) : [cleaned];
    for (const part of parts) if (part !== '') out.add(part);
  }
  return [...out];
}

function dnssec(es: readonly WhoisEntry[]): boolean | null {
  const stated = first(es, FIELDS.dnssec);
  if (stated !== null) {
    if (/^(unsigned|no|inactive|false|not signed|unsigned delegation)\b/i.test(stated)) return false;
    if (/^(signed|yes|active|true|signeddelegation)/i.test(stated)) return true;
  }
  return all(es, FIELDS.dnssecData).length > 0 ? true : null;
}

function date(es: readonly WhoisEntry[], keys: readonly string[]): string | null {
  for (const key of keys) {
    for (const e of es) {
      if (e.key !== key) continue;
      const iso = toIsoDate(e.value);
      if (iso !== null) return iso;
    }
  }
  return null;
}

function registrarName(value: string | null): string | null {
  // Nominet: "Example Registrar Ltd t/a Example [Tag = EXAMPLE]"
  const name = value === null ? null : withoutTrailingTag(value).trim();
  return name ? name : null;
}

function whoisServer(value: string | null): string | null {
  if (value === null) return null;
  const server = parseReferral(value);
  return server ? formatWhoisServer(server) : value;
}

/** The fields of one WHOIS answer. */
export function parseWhois(text: string, parsed: readonly WhoisEntry[] = entries(text)): WhoisFields {
  const notFound = linesOf(text).some((line) => NOT_FOUND.some((re) => re.test(line)));
  const domain = first(parsed, FIELDS.domain);
  return {
    domain: domain === null ? null : domain.toLowerCase().replace(/\.$/, ''),
    registered: notFound ? false : domain !== null ? true : null,
    registrar: registrarName(first(parsed, FIELDS.registrar)),
    registrar_url: first(parsed, FIELDS.registrar_url),
    whois_server: whoisServer(first(parsed, FIELDS.whois_server)),
    creation_date: date(parsed, FIELDS.creation_date),
    updated_date: date(parsed, FIELDS.updated_date),
    expiration_date: date(parsed, FIELDS.expiration_date),
    name_servers: nameServers(all(parsed, FIELDS.name_servers)),
    status: notFound ? [] : statuses(all(parsed, FIELDS.status)),
    dnssec: dnssec(parsed),
  };
}
