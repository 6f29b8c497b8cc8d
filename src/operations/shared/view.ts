import { pageTime } from '../../lib/time.js';
import { labelOf } from './words.js';

/**
 * A job's result as a person reads it on the dashboard: a list of blocks (labelled fields,
 * tables, a port grid) that one template draws (src/http/pages/result-blocks.eta). An operation
 * may declare a view made for it (`view` of its declaration, in its folder's view.ts); any other
 * gets the generic view, built from the JSON itself, so a new operation's result is readable the
 * day it is declared. This module holds the blocks, the helpers the views share, and the generic
 * view.
 *
 * Every value here came from a peer or a probe: the template escapes all of it, and nothing is
 * parsed with more than a split on a fixed character.
 */

export interface Field {
  label: string;
  value: string;
  /** An ISO date: shown as a date, with the ISO text in `datetime`. */
  time?: string;
  /** A state to colour: 'ok', 'bad' or 'muted'. */
  tone?: Tone;
}

export type Tone = 'ok' | 'bad' | 'muted';

export interface Cell {
  text: string;
  tone?: Tone;
  code?: boolean;
}

export type Block =
  | { type: 'fields'; title: string; fields: Field[] }
  | { type: 'table'; title: string; columns: string[]; numeric: number[]; rows: Cell[][]; more: number }
  | { type: 'ports'; title: string; ports: Array<{ port: number; state: string; service: string }> }
  | { type: 'list'; title: string; items: string[] }
  | { type: 'text'; title: string; text: string };

/** Rows a generic table shows before it says how many more the download holds. */
export const TABLE_ROWS_MAX = 500;
/** Fields and nesting the generic view walks: a result is bounded, but a page is read by a person. */
const GENERIC_FIELDS_MAX = 200;
const GENERIC_DEPTH_MAX = 4;

/**
 * An operation's view of a job's result. `result` is the stored JSON, read as it came (a view
 * checks every field it reads); `total` is the whole result's items when `result` holds only the
 * first of them (a job page's part).
 */
export interface ResultView {
  blocks(result: Json, now: number, total?: number): Block[];
  /** What an item of a partial result is, as the job page counts them ("ports"); "items" without it. */
  items?: string;
}

export type Json = unknown;
export type Obj = Record<string, Json>;

export const isObj = (v: Json): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
export const str = (v: Json): string => (v === null || v === undefined ? '—' : typeof v === 'object' ? JSON.stringify(v) : String(v));
export const ms = (v: Json): string => (typeof v === 'number' ? `${v} ms` : '—');
export const yesNo = (v: Json, unknown = 'unknown'): string => (v === true ? 'yes' : v === false ? 'no' : unknown);

/** A label inside another ('Certificate' + 'Not after' → 'Certificate not after'); 'IP', 'TLS' keep their capitals. */
function inner(label: string): string {
  return /^[A-Z][A-Z0-9]/.test(label) ? label : label.charAt(0).toLowerCase() + label.slice(1);
}

/** Field names whose numbers are milliseconds (docs/api.md: durations in JSON are ms unless the name says otherwise). */
const MS_KEYS = /^(response_time|time|min|avg|max|mdev|last|best|worst|stdev|dns|connect|tls|ttfb|total|redirect|duration|rtt)$/;

const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

/** A date field: shown as `2026-11-23 06:16 UTC` with how far away it is. */
export function dateField(label: string, iso: Json, now: number): Field {
  if (typeof iso !== 'string' || !ISO_DATE.test(iso) || !Number.isFinite(Date.parse(iso))) return { label, value: str(iso), tone: 'muted' };
  const days = Math.round((Date.parse(iso) - now) / 86_400_000);
  const rel = days === 0 ? 'today' : days > 0 ? `in ${days} day${days === 1 ? '' : 's'}` : `${-days} day${days === -1 ? '' : 's'} ago`;
  return { label, value: `${pageTime(iso, iso.length <= 10)} (${rel})`, time: iso };
}

// --- HTTP and TLS checks, TCP ping ---

function httpView(result: Json): Block[] {
  if (!isObj(result)) return [];
  const t = isObj(result.timings) ? result.timings : {};
  const tls = isObj(result.tls) ? result.tls : null;
  const status = typeof result.status === 'number' ? result.status : null;
  const blocks: Block[] = [
    {
      type: 'fields',
      title: 'Answer',
      fields: [
        { label: 'Asked', value: str(result.url) },
        ...(result.final_url !== result.url ? [{ label: 'Ended at', value: str(result.final_url) }] : []),
        { label: 'Status', value: status === null ? 'no answer' : `${status}${result.http_version ? ` over HTTP/${str(result.http_version)}` : ''}`, tone: status !== null && status < 400 ? 'ok' : 'bad' },
        { label: 'Server address', value: str(result.ip) },
        { label: 'Body', value: typeof result.body_bytes === 'number' ? `${bytes(result.body_bytes)}${result.body_truncated === true ? ', cut at the limit' : ''}` : '—' },
        ...(result.body_sha256 ? [{ label: 'Body SHA-256', value: str(result.body_sha256) }] : []),
        { label: 'TLS', value: tls ? `${str(tls.protocol)}, ${str(tls.cipher)}` : 'none (plain HTTP)' },
        ...(result.error ? [{ label: 'Error', value: str(result.error), tone: 'bad' as const }] : []),
      ],
    },
    {
      type: 'table',
      title: 'Timings (from the start of the last request)',
      columns: ['Step', 'Time'],
      numeric: [1],
      rows: (
        [
          ['Name resolved', t.dns],
          ['Connected', t.connect],
          ['TLS handshake done', t.tls],
          ['First byte', t.ttfb],
          ['Whole answer', t.total],
          ...('redirect' in t ? [['Redirects before it', t.redirect] as [string, Json]] : []),
        ] as [string, Json][]
      ).map(([step, v]) => [{ text: step }, { text: v === null || v === undefined ? 'not done' : ms(v), ...(v === null ? { tone: 'muted' as const } : {}) }]),
      more: 0,
    },
  ];
  const redirects = Array.isArray(result.redirects) ? result.redirects.filter(isObj) : [];
  if (redirects.length) {
    blocks.push({
      type: 'table',
      title: `Redirects followed (${redirects.length})`,
      columns: ['From', 'Status', 'To'],
      numeric: [1],
      rows: redirects.map((r) => [{ text: str(r.url), code: true }, { text: str(r.status) }, { text: str(r.location), code: true }]),
      more: 0,
    });
  }
  const headers = isObj(result.headers) ? Object.entries(result.headers) : [];
  if (headers.length) {
    blocks.push({
      type: 'table',
      title: `Response headers (${headers.length})`,
      columns: ['Header', 'Value'],
      numeric: [],
      rows: headers.slice(0, TABLE_ROWS_MAX).map(([k, v]) => [{ text: k, code: true }, { text: Array.isArray(v) ? v.map(str).join(', ') : str(v), code: true }]),
      more: Math.max(0, headers.length - TABLE_ROWS_MAX),
    });
  }
  return blocks;
}

function tlsView(result: Json, now: number): Block[] {
  if (!isObj(result)) return [];
  const cert = isObj(result.certificate) ? result.certificate : null;
  const key = cert && isObj(cert.key) ? cert.key : null;
  const days = cert && typeof cert.days_left === 'number' ? cert.days_left : null;
  const blocks: Block[] = [
    {
      type: 'fields',
      title: 'Connection',
      fields: [
        { label: 'Server', value: `${str(result.host)} port ${str(result.port)}${result.ip ? ` (${str(result.ip)})` : ''}` },
        { label: 'Trusted', value: result.authorized === true ? 'yes' : `no${result.authorization_error ? `: ${str(result.authorization_error)}` : ''}`, tone: result.authorized === true ? 'ok' : 'bad' },
        { label: 'Names the host', value: yesNo(result.hostname_match), tone: result.hostname_match === true ? 'ok' : 'bad' },
        { label: 'Protocol', value: `${str(result.protocol)}, ${str(result.cipher)}` },
        { label: 'ALPN', value: result.alpn ? str(result.alpn) : 'none' },
        ...(result.error ? [{ label: 'Error', value: str(result.error), tone: 'bad' as const }] : []),
      ],
    },
  ];
  if (cert) {
    const expiry = dateField('Expires', cert.not_after, now);
    blocks.push({
      type: 'fields',
      title: 'Certificate',
      fields: [
        { label: 'Subject', value: str(cert.subject) },
        { label: 'Issuer', value: str(cert.issuer) },
        { ...expiry, ...(days !== null && expiry.time !== undefined ? { value: `${pageTime(expiry.time, false)} (${days < 0 ? `expired ${-days} day${days === -1 ? '' : 's'} ago` : `${days} day${days === 1 ? '' : 's'} left`})`, tone: days > 14 ? ('ok' as const) : ('bad' as const) } : {}) },
        dateField('Valid from', cert.not_before, now),
        { label: 'Names (SAN)', value: Array.isArray(cert.san) && cert.san.length ? cert.san.map(str).join(', ') : 'none' },
        ...(key ? [{ label: 'Key', value: `${str(key.type)}${typeof key.bits === 'number' ? `, ${key.bits} bits` : ''}` }] : []),
        { label: 'Serial', value: str(cert.serial) },
        { label: 'SHA-256 fingerprint', value: str(cert.fingerprint_sha256) },
      ],
    });
  }
  const chain = Array.isArray(result.chain) ? result.chain.filter(isObj) : [];
  if (chain.length) {
    blocks.push({
      type: 'table',
      title: `Chain (${chain.length})`,
      columns: ['Subject', 'Issuer', 'Expires'],
      numeric: [],
      rows: chain.map((c) => [{ text: str(c.subject) }, { text: str(c.issuer) }, { text: dateField('', c.not_after, now).value }]),
      more: 0,
    });
  }
  return blocks;
}

function tcpPingView(result: Json): Block[] {
  if (!isObj(result)) return [];
  const samples = Array.isArray(result.samples) ? result.samples : [];
  const outcomes = Array.isArray(result.outcomes) ? result.outcomes : [];
  const loss = Number(result.loss_percent);
  const blocks: Block[] = [
    {
      type: 'fields',
      title: 'Summary',
      fields: [
        { label: 'Target', value: `${str(result.host)} port ${str(result.port)}${result.ip ? ` (${str(result.ip)})` : ''}` },
        { label: 'Handshakes', value: `${str(result.received)} of ${str(result.sent)} (${str(result.loss_percent)} % lost)`, tone: loss === 0 ? 'ok' : 'bad' },
        { label: 'Round trip', value: result.avg === null ? 'none received' : `min ${ms(result.min)}, average ${ms(result.avg)}, max ${ms(result.max)}, deviation ${ms(result.mdev)}` },
        ...(result.error ? [{ label: 'Error', value: str(result.error), tone: 'bad' as const }] : []),
      ],
    },
  ];
  if (samples.length) {
    blocks.push({
      type: 'table',
      title: `Probes (${samples.length})`,
      columns: ['Probe', 'Outcome', 'Handshake'],
      numeric: [0, 2],
      rows: samples.map((v, i) => [{ text: String(i + 1) }, { text: str(outcomes[i]), tone: outcomes[i] === 'connected' ? 'ok' : 'bad' }, { text: v === null ? 'lost' : ms(v) }]),
      more: 0,
    });
  }
  return blocks;
}

// --- Bulk calls: one row per entry ---

export function bulkTable(title: string, columns: string[], numeric: number[], rowOf: (r: Obj) => Cell[]): (result: Json) => Block[] {
  return (result) => {
    const rows = Array.isArray(result) ? result.filter(isObj) : [];
    return [{ type: 'table', title: `${title} (${rows.length})`, columns, numeric, rows: rows.slice(0, TABLE_ROWS_MAX).map(rowOf), more: Math.max(0, rows.length - TABLE_ROWS_MAX) }];
  };
}

export const errorCell = (r: Obj): Cell => ({ text: str(r.error), tone: 'bad' });

// --- Anything else ---

/** A scalar as a person reads it: yes / no, and a unit where the field's name says what it counts. */
function valueOf(key: string, v: Json): string {
  if (typeof v === 'boolean') return yesNo(v);
  if (typeof v !== 'number') return str(v);
  if (MS_KEYS.test(key) || key.endsWith('_ms') || key.endsWith('_time') || key === 'samples') return `${v} ms`;
  if (key.endsWith('_percent')) return `${v} %`;
  if (key.endsWith('_bytes') || key === 'bytes') return bytes(v);
  if (key.endsWith('_s')) return `${v} s`;
  if (key.startsWith('days')) return `${v} day${v === 1 ? '' : 's'}`;
  return str(v);
}

/** 1256 → '1,256 bytes'; 2_400_000 → '2.3 MiB (2,400,000 bytes)'. */
export function bytes(n: number): string {
  const exact = `${n.toLocaleString('en-US')} byte${n === 1 ? '' : 's'}`;
  if (n < 1024) return exact;
  const [v, unit] = n < 1024 * 1024 ? [n / 1024, 'KiB'] : [n / (1024 * 1024), 'MiB'];
  return `${v.toFixed(1)} ${unit} (${exact})`;
}

/** Scalars of an object as fields, nested objects flattened into `parent child` labels. */
function flatFields(o: Obj, now: number, prefix = '', depth = 0, out: Field[] = [], lists: Block[] = []): { fields: Field[]; lists: Block[] } {
  for (const [k, v] of Object.entries(o)) {
    if (out.length >= GENERIC_FIELDS_MAX) break;
    const label = prefix ? `${prefix} ${inner(labelOf(k))}` : labelOf(k);
    if (isObj(v) && depth < GENERIC_DEPTH_MAX) flatFields(v, now, label, depth + 1, out, lists);
    else if (Array.isArray(v) && v.some(isObj) && depth < GENERIC_DEPTH_MAX) lists.push(tableOf(label, v));
    else if (Array.isArray(v)) out.push({ label, value: v.length ? v.map((x) => valueOf(k, x)).join(', ') : 'none' });
    else if (typeof v === 'string' && (k.endsWith('_at') || k.endsWith('_date') || k === 'not_before' || k === 'not_after' || k === 'valid_from' || k === 'valid_to') && ISO_DATE.test(v)) out.push(dateField(label, v, now));
    else out.push({ label, value: valueOf(k, v), ...(v === true ? { tone: 'ok' as const } : v === false ? { tone: 'muted' as const } : {}) });
  }
  return { fields: out, lists };
}

/** A list of objects as a table: a column per scalar field any row has (nested objects as JSON). */
function tableOf(title: string, list: Json[]): Block {
  const rows = list.filter(isObj);
  const columns: string[] = [];
  for (const r of rows.slice(0, TABLE_ROWS_MAX)) for (const k of Object.keys(r)) if (!columns.includes(k) && columns.length < 12) columns.push(k);
  return {
    type: 'table',
    title: `${title} (${rows.length})`,
    columns: columns.map(labelOf),
    numeric: columns.flatMap((c, i) => (rows.some((r) => typeof r[c] === 'number') ? [i] : [])),
    rows: rows.slice(0, TABLE_ROWS_MAX).map((r) => columns.map((c) => ({ text: valueOf(c, r[c]) }))),
    more: Math.max(0, rows.length - TABLE_ROWS_MAX),
  };
}

export function genericView(result: Json, now: number): Block[] {
  if (Array.isArray(result)) return result.some(isObj) ? [tableOf('Results', result)] : [{ type: 'list', title: 'Results', items: result.map(str) }];
  if (!isObj(result)) return [{ type: 'fields', title: 'Result', fields: [{ label: 'Value', value: str(result) }] }];
  const { fields, lists } = flatFields(result, now);
  return [{ type: 'fields', title: 'Result', fields }, ...lists];
}

/** The views made by hand, by endpoint, until each is its operation's. */
export const LEGACY_VIEWS: Record<string, ResultView> = {
  '/http/check': { blocks: httpView },
  '/tls/check': { blocks: tlsView },
  '/ping/tcp': { blocks: tcpPingView },
};

/** The blocks of a job's result, by its operation's view or the generic one; [] when it has none yet. */
export function resultBlocks(view: ResultView | undefined, result: Json, now: number, total?: number): Block[] {
  if (result === null || result === undefined) return [];
  return view ? view.blocks(result, now, total) : genericView(result, now);
}
