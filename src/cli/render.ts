/**
 * What a person reads on a terminal, driven by the shape of `data`: an object is key/value lines,
 * an array of flat objects a table with one column per field, anything deeper a block per item.
 * The few touches (which columns a port scan shows) are keyed by path, below.
 */

export interface Touch {
  /** The columns a table of items shows, in order (others are left out). */
  columns?: string[];
  /** Rows left out of a long table, counted in one line instead (nmap's "Not shown: 997 closed ports"). */
  quiet?: { when: (row: Record<string, unknown>) => boolean; label: string };
  /** One line instead of the whole table when every row says the same thing (a name that does not resolve); null otherwise. */
  once?: (rows: Record<string, unknown>[]) => string | null;
}

const PORT_TABLE: Touch = {
  columns: ['port', 'state', 'service', 'response_time', 'error'],
  // An unresolved port is never printed as it completes: the result says it once (below).
  quiet: { when: (row) => row.state === 'closed' || row.state === 'unresolved', label: 'closed ports' },
  once: (rows) =>
    rows.length > 0 && rows.every((r) => r.state === 'unresolved')
      ? `${cell(rows[0]!.host)} did not resolve (${cell(rows[0]!.error)}): none of the ${rows.length} ports was scanned`
      : null,
};

/** The touches, by the path of the command. */
export const TOUCHES: Record<string, Touch> = {
  '/port/scan-range': PORT_TABLE,
  '/port/scan-common': PORT_TABLE,
  '/jobs': { columns: ['id', 'endpoint', 'status', 'progress', 'created_at', 'finished_at'] },
};

/** Rows of a table past which the quiet ones are counted instead of shown. */
const QUIET_AFTER = 10;

type Row = Record<string, unknown>;

const isObject = (v: unknown): v is Row => typeof v === 'object' && v !== null && !Array.isArray(v);
const isScalar = (v: unknown): boolean => v === null || v === undefined || typeof v !== 'object';
/** A count of work done, `{done, total}`: a cell reads it as `3/5`. */
const isFraction = (v: unknown): v is { done: number; total: number } =>
  isObject(v) && typeof v.done === 'number' && typeof v.total === 'number' && Object.keys(v).length === 2;
/** A value that fits in one cell: a scalar, a list of scalars, or a fraction. */
const isFlat = (v: unknown): boolean => isScalar(v) || (Array.isArray(v) && v.every(isScalar)) || isFraction(v);

export function cell(v: unknown): string {
  if (v === null || v === undefined) return '-';
  if (Array.isArray(v)) return v.length === 0 ? '-' : v.map(cell).join(', ');
  if (isFraction(v)) return `${v.done}/${v.total}`;
  if (isObject(v)) return JSON.stringify(v);
  return String(v);
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((l) => (l === '' ? l : `  ${l}`))
    .join('\n');
}

function table(rows: Row[], touch: Touch | undefined): string {
  const once = touch?.once?.(rows);
  if (once) return once;
  let shown = rows;
  let note = '';
  const quiet = touch?.quiet;
  if (quiet && rows.length > QUIET_AFTER) {
    shown = rows.filter((r) => !quiet.when(r));
    if (shown.length < rows.length) note = `\nNot shown: ${rows.length - shown.length} ${quiet.label}`;
  }
  const seen = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const present = (k: string) => rows.some((r) => r[k] !== null && r[k] !== undefined);
  const touched = touch?.columns?.filter((k) => seen.includes(k));
  const columns = (touched?.length ? touched : seen).filter(present);
  const grid = [columns, ...shown.map((r) => columns.map((k) => cell(r[k])))];
  const widths = columns.map((_, i) => Math.max(...grid.map((line) => line[i]!.length)));
  if (shown.length === 0) return note.trimStart();
  const text = grid.map((line) => line.map((c, i) => (i === line.length - 1 ? c : c.padEnd(widths[i]!))).join('  ').trimEnd()).join('\n');
  return text + note;
}

/** An object as aligned `key  value` lines; nested objects and lists of objects indented under their key. */
function object(value: Row, touch: Touch | undefined): string {
  const entries = Object.entries(value).filter(([, v]) => v !== undefined);
  const width = Math.max(0, ...entries.filter(([, v]) => isFlat(v)).map(([k]) => k.length));
  return entries
    .map(([k, v]) => {
      if (isFlat(v)) return `${k.padEnd(width)}  ${cell(v)}`;
      if (Array.isArray(v) && v.length === 0) return `${k.padEnd(width)}  -`;
      return `${k}:\n${indent(render(v, touch))}`;
    })
    .join('\n');
}

/** `data` as a person reads it. */
export function render(value: unknown, touch?: Touch): string {
  if (isScalar(value)) return cell(value);
  if (Array.isArray(value)) {
    if (value.length === 0) return '(none)';
    if (value.every(isScalar)) return value.map(cell).join('\n');
    const rows = value.filter(isObject);
    // A touch's columns are all a table shows: only they need to fit in cells.
    const columns = touch?.columns?.filter((k) => rows.some((r) => k in r));
    const shown = (r: Row) => (columns?.length ? columns.map((k) => r[k]) : Object.values(r));
    if (rows.length === value.length && rows.every((r) => shown(r).every(isFlat))) return table(rows, touch);
    return value.map((v) => render(v, touch)).join('\n\n');
  }
  return object(value as Row, touch);
}

/** One item of a job as it completes, on one line: `port=80 state=open service=http ...`; null when the touch keeps it quiet. */
export function itemLine(item: unknown, touch?: Touch): string | null {
  if (!isObject(item)) return cell(item);
  if (touch?.quiet?.when(item)) return null;
  const keys = touch?.columns ?? Object.keys(item);
  return keys
    .filter((k) => item[k] !== null && item[k] !== undefined)
    .map((k) => `${k}=${isFlat(item[k]) ? cell(item[k]) : JSON.stringify(item[k])}`)
    .join(' ');
}
