import ipaddr from 'ipaddr.js';
import { field, list, obj, str, strings, type JsonObject } from './json.js';
import { RDAP_MAX_CIDRS, RDAP_MAX_ENTITIES, RDAP_MAX_ENTITY_DEPTH } from './defaults.js';
import type { WhoisFields } from '../whois/types.js';

/**
 * Fields of RDAP objects (RFC 9083): domains (5.3), IP networks (5.4), autonomous systems (5.5)
 * and the entities they carry (5.1), whose contact data is a jCard (RFC 7095). Every value is
 * checked for its type before use; what is missing or of the wrong type is null.
 */

/** One entity as read: its roles and the jCard fields we use. */
export interface EntityView {
  roles: string[];
  handle: string | null;
  fn: string | null;
  org: string | null;
  email: string | null;
  url: string | null;
  /** Nesting below the object (1: its own entities). */
  depth: number;
}

/** A jCard property's value: a string, or the first string of a structured value. */
function jcardValue(value: unknown): string | null {
  if (typeof value === 'string') return str(value);
  if (Array.isArray(value)) {
    for (const part of list(value)) {
      const s = str(part);
      if (s !== null) return s;
    }
  }
  return null;
}

/** fn, org, email and url of a jCard: ["vcard", [["fn", {}, "text", "Example Inc."], ...]]. */
export function readJcard(vcardArray: unknown): Pick<EntityView, 'fn' | 'org' | 'email' | 'url'> {
  const out: Pick<EntityView, 'fn' | 'org' | 'email' | 'url'> = { fn: null, org: null, email: null, url: null };
  if (!Array.isArray(vcardArray) || vcardArray[0] !== 'vcard') return out;
  for (const property of list(vcardArray[1])) {
    if (!Array.isArray(property) || property.length < 4) continue;
    const name = typeof property[0] === 'string' ? property[0].toLowerCase() : null;
    if (name !== 'fn' && name !== 'org' && name !== 'email' && name !== 'url') continue;
    if (out[name] !== null) continue;
    out[name] = jcardValue(property[3]);
  }
  return out;
}

/** The object's entities and theirs, breadth first, at most RDAP_MAX_ENTITIES of them, RDAP_MAX_ENTITY_DEPTH deep. */
export function entitiesOf(root: JsonObject): EntityView[] {
  const out: EntityView[] = [];
  let level: unknown[] = list(field(root, 'entities'));
  for (let depth = 1; depth <= RDAP_MAX_ENTITY_DEPTH && level.length > 0 && out.length < RDAP_MAX_ENTITIES; depth++) {
    const next: unknown[] = [];
    for (const item of level) {
      if (out.length >= RDAP_MAX_ENTITIES) break;
      const entity = obj(item);
      if (entity === null) continue;
      out.push({
        roles: strings(field(entity, 'roles')).map((r) => r.toLowerCase()),
        handle: str(field(entity, 'handle')),
        ...readJcard(field(entity, 'vcardArray')),
        depth,
      });
      next.push(...list(field(entity, 'entities')));
    }
    level = next;
  }
  return out;
}

export function withRole(entities: readonly EntityView[], role: string): EntityView | undefined {
  return entities.find((e) => e.roles.includes(role));
}

/** The abuse e-mail: an abuse entity's, the shallowest first (RIRs nest it under the registrant). */
export function abuseEmail(entities: readonly EntityView[]): string | null {
  for (const e of entities) if (e.roles.includes('abuse') && e.email !== null) return e.email;
  return null;
}

/** ISO 8601 UTC, seconds precision ("2024-01-02T03:04:05Z"), or null for what is no date. */
export function isoDate(value: unknown): string | null {
  const s = str(value);
  if (s === null || s.length > 40) return null;
  const ms = Date.parse(s);
  if (!Number.isFinite(ms)) return null;
  return new Date(ms).toISOString().slice(0, 19) + 'Z';
}

/** The date of the first event with this action ("registration", "last changed", "expiration"). */
export function eventDate(root: JsonObject, action: string): string | null {
  for (const item of list(field(root, 'events'))) {
    const event = obj(item);
    if (str(field(event, 'eventAction'))?.toLowerCase() === action) return isoDate(field(event, 'eventDate'));
  }
  return null;
}

/**
 * RDAP status values (RFC 8056 3.1: "client transfer prohibited") as the EPP codes WHOIS shows
 * ("clientTransferProhibited"; "active" is EPP's "ok"), so both sources read alike.
 */
export function eppStatus(value: string): string {
  const words = value.toLowerCase().split(/[\s_]+/).filter((w) => w !== '');
  if (words.length === 1 && words[0] === 'active') return 'ok';
  return words.map((w, i) => (i === 0 ? w : w.charAt(0).toUpperCase() + w.slice(1))).join('');
}

/** A link's href with this relation (and type, when given), as an absolute http(s) URL. */
export function linkHref(root: JsonObject, rel: string, type?: string): string | null {
  for (const item of list(field(root, 'links'))) {
    const link = obj(item);
    if (str(field(link, 'rel'))?.toLowerCase() !== rel) continue;
    if (type !== undefined && str(field(link, 'type'))?.toLowerCase().split(';')[0]?.trim() !== type) continue;
    const href = str(field(link, 'href'));
    if (href === null) continue;
    try {
      const url = new URL(href);
      if (url.protocol === 'https:' || url.protocol === 'http:') return url.href;
    } catch {
      // not a URL
    }
  }
  return null;
}

/**
 * A domain object's fields: the WHOIS fields (one /dns/whois answer, whichever protocol gave it;
 * `registered` is the lookup's to say, not the object's), and what RDAP adds.
 */
export interface DomainFields extends Omit<WhoisFields, 'registered'> {
  /** The registrant's organisation (or name) when the registry publishes it. */
  registrant: string | null;
  /** The abuse contact's e-mail (ICANN registries: the registrar's). */
  abuse_email: string | null;
  /** The registrar's RDAP URL for the domain (a "related" link), to ask next. */
  related: string | null;
}

function hostName(value: unknown): string | null {
  const s = str(value);
  if (s === null) return null;
  const name = s.toLowerCase().replace(/\.$/, '');
  return name === '' ? null : name;
}

export function readDomain(root: JsonObject): DomainFields {
  const entities = entitiesOf(root);
  const registrar = withRole(entities, 'registrar');
  const registrant = withRole(entities, 'registrant');
  const servers: string[] = [];
  for (const item of list(field(root, 'nameservers'))) {
    const name = hostName(field(obj(item), 'ldhName'));
    if (name !== null && !servers.includes(name)) servers.push(name);
  }
  const status: string[] = [];
  for (const s of strings(field(root, 'status'))) {
    const code = eppStatus(s);
    if (code !== '' && !status.includes(code)) status.push(code);
  }
  const secure = field(obj(field(root, 'secureDNS')), 'delegationSigned');
  return {
    domain: hostName(field(root, 'ldhName')),
    registrar: registrar ? (registrar.fn ?? registrar.org) : null,
    registrar_url: registrar?.url ?? null,
    whois_server: hostName(field(root, 'port43')),
    creation_date: eventDate(root, 'registration'),
    updated_date: eventDate(root, 'last changed'),
    expiration_date: eventDate(root, 'expiration'),
    name_servers: servers,
    status,
    dnssec: typeof secure === 'boolean' ? secure : null,
    registrant: registrant ? (registrant.org ?? registrant.fn) : null,
    abuse_email: abuseEmail(entities),
    related: linkHref(root, 'related', 'application/rdap+json'),
  };
}

export interface NetworkFields {
  handle: string | null;
  name: string | null;
  type: string | null;
  country: string | null;
  start_address: string | null;
  end_address: string | null;
  cidr: string[];
  asn_range: { start: number; end: number } | null;
  registrant: string | null;
  abuse_email: string | null;
  created: string | null;
  updated: string | null;
}

function address(value: unknown): ipaddr.IPv4 | ipaddr.IPv6 | null {
  const s = str(value);
  if (s === null || s.length > 45) return null;
  try {
    return ipaddr.parse(s);
  } catch {
    return null;
  }
}

function bigOf(addr: ipaddr.IPv4 | ipaddr.IPv6): bigint {
  return addr.toByteArray().reduce((acc, byte) => (acc << 8n) | BigInt(byte), 0n);
}

function addrOf(value: bigint, bits: 32 | 128): string {
  const bytes: number[] = [];
  for (let i = bits / 8 - 1; i >= 0; i--) bytes.push(Number((value >> BigInt(i * 8)) & 0xffn));
  return ipaddr.fromByteArray(bytes).toString();
}

/** The fewest CIDR blocks covering start..end (at most RDAP_MAX_CIDRS). */
export function rangeToCidrs(start: ipaddr.IPv4 | ipaddr.IPv6, end: ipaddr.IPv4 | ipaddr.IPv6): string[] {
  if (start.kind() !== end.kind()) return [];
  const bits = start.kind() === 'ipv4' ? 32 : 128;
  let lo = bigOf(start);
  const hi = bigOf(end);
  const out: string[] = [];
  while (lo <= hi && out.length < RDAP_MAX_CIDRS) {
    let size = 0;
    // The largest block aligned at lo that stays within hi.
    while (size < bits && (lo & ((1n << BigInt(size + 1)) - 1n)) === 0n && lo + (1n << BigInt(size + 1)) - 1n <= hi) size++;
    out.push(`${addrOf(lo, bits)}/${bits - size}`);
    lo += 1n << BigInt(size);
  }
  return out;
}

/** cidr0_cidrs (the RIRs' CIDR extension): [{v4prefix | v6prefix, length}]. */
function cidr0(root: JsonObject): string[] {
  const out: string[] = [];
  for (const item of list(field(root, 'cidr0_cidrs'))) {
    const block = obj(item);
    const prefix = address(field(block, 'v4prefix') ?? field(block, 'v6prefix'));
    const length = field(block, 'length');
    if (prefix === null || typeof length !== 'number' || !Number.isInteger(length) || length < 0 || length > (prefix.kind() === 'ipv4' ? 32 : 128)) continue;
    if (out.length < RDAP_MAX_CIDRS) out.push(`${prefix.toString()}/${length}`);
  }
  return out;
}

function asNumber(value: unknown): number | null {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= 0xffffffff ? value : null;
}

function country(value: unknown): string | null {
  const s = str(value);
  return s !== null && /^[A-Za-z]{2}$/.test(s) ? s.toUpperCase() : null;
}

/** An IP network (objectClassName "ip network") or an autonomous system ("autnum"). */
export function readNetwork(root: JsonObject): NetworkFields {
  const entities = entitiesOf(root);
  const registrant = withRole(entities, 'registrant');
  const start = address(field(root, 'startAddress'));
  const end = address(field(root, 'endAddress'));
  const cidrs = cidr0(root);
  const startAs = asNumber(field(root, 'startAutnum'));
  const endAs = asNumber(field(root, 'endAutnum'));
  return {
    handle: str(field(root, 'handle')),
    name: str(field(root, 'name')),
    type: str(field(root, 'type')),
    country: country(field(root, 'country')),
    start_address: start?.toString() ?? null,
    end_address: end?.toString() ?? null,
    cidr: cidrs.length > 0 ? cidrs : start && end ? rangeToCidrs(start, end) : [],
    asn_range: startAs !== null ? { start: startAs, end: endAs !== null && endAs >= startAs ? endAs : startAs } : null,
    registrant: registrant ? (registrant.org ?? registrant.fn) : null,
    abuse_email: abuseEmail(entities),
    created: eventDate(root, 'registration'),
    updated: eventDate(root, 'last changed'),
  };
}
