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
/** ping's summary of round trips (min, average, max, deviation), as a field; 'none received' when none came back. */
export function roundTripField(result: Obj): Field {
  return { label: 'Round trip', value: result.avg === null ? 'none received' : `min ${ms(result.min)}, average ${ms(result.avg)}, max ${ms(result.max)}, deviation ${ms(result.mdev)}` };
}

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

// --- For the views of the bulk calls ---

/** A bulk call's result as one table, a row per entry (`rowOf`), the first TABLE_ROWS_MAX of them. */
export function bulkTable(title: string, columns: string[], numeric: number[], rowOf: (r: Obj) => Cell[]): (result: Json) => Block[] {
  return (result) => {
    const rows = Array.isArray(result) ? result.filter(isObj) : [];
    return [{ type: 'table', title: `${title} (${rows.length})`, columns, numeric, rows: rows.slice(0, TABLE_ROWS_MAX).map(rowOf), more: Math.max(0, rows.length - TABLE_ROWS_MAX) }];
  };
}

/** An entry that was refused: its error, in the bad tone. */
export const errorCell = (r: Obj): Cell => ({ text: str(r.error), tone: 'bad' });

// --- The generic view: any result, read from its JSON ---

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

/** The blocks of a job's result, by its operation's view or the generic one; [] when it has none yet. */
export function resultBlocks(view: ResultView | undefined, result: Json, now: number, total?: number): Block[] {
  if (result === null || result === undefined) return [];
  return view ? view.blocks(result, now, total) : genericView(result, now);
}
