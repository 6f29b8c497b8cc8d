/**
 * WHOIS dates come in every format a registry ever chose; this converts the ones in use into
 * ISO 8601 UTC ("2024-01-02T03:04:05Z"). Ambiguous forms (01/02/2024: January or February?)
 * give null rather than a guess.
 */

const MONTHS: Record<string, number> = {
  jan: 1, feb: 2, mar: 3, apr: 4, may: 5, jun: 6, jul: 7, aug: 8, sep: 9, oct: 10, nov: 11, dec: 12,
};

function build(y: number, mo: number, d: number, h = 0, mi = 0, s = 0, offsetMin = 0): string | null {
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 60) return null;
  const ms = Date.UTC(y, mo - 1, d, h, mi, Math.min(s, 59)) - offsetMin * 60_000;
  const check = new Date(Date.UTC(y, mo - 1, d));
  // Date.UTC rolls 2024-02-30 over to March; a date that does not exist is not a date.
  if (check.getUTCMonth() !== mo - 1 || check.getUTCDate() !== d) return null;
  return new Date(ms).toISOString().slice(0, 19) + 'Z';
}

/** "+02:00", "+0200", "-05", "Z", "UTC", "GMT" or nothing (taken as UTC) -> minutes east of UTC. */
function offset(tz: string | undefined): number | null {
  if (tz === undefined || tz === '' || /^(z|utc|gmt)$/i.test(tz)) return 0;
  const m = /^([+-])(\d{2}):?(\d{2})?$/.exec(tz);
  if (!m) return null;
  const minutes = Number(m[2]) * 60 + Number(m[3] ?? 0);
  return m[1] === '-' ? -minutes : minutes;
}

const TIME = String.raw`(?:[T ]+(\d{1,2}):(\d{2})(?::(\d{2})(?:[.,]\d+)?)?)?\s*(Z|UTC|GMT|[+-]\d{2}(?::?\d{2})?)?`;
/** 2024-01-02, 2024-01-02T03:04:05Z, 2024-01-02 03:04:05+02:00, 2024.01.02, 2024/01/02 03:04 */
const YMD = new RegExp(String.raw`^(\d{4})[-./](\d{1,2})[-./](\d{1,2})` + TIME + String.raw`(?:\s|\(|$)`, 'i');
/** 01-Aug-1995, 1 Aug 2025, 01-aug-1995 10:00:00 */
const DMONY = new RegExp(String.raw`^(\d{1,2})[- ]([a-z]{3})[a-z]*\.?[- ,]+(\d{4})` + TIME + String.raw`(?:\s|$)`, 'i');
/** 15.10.1997 (day first: the dotted form is day-month-year wherever it is used) */
const DMY_DOTS = new RegExp(String.raw`^(\d{1,2})\.(\d{1,2})\.(\d{4})` + TIME + String.raw`(?:\s|$)`, 'i');
/** 20240102 (.br and a few others) */
const COMPACT = /^(\d{4})(\d{2})(\d{2})(?:\s|$)/;
/** Mon Jan 02 03:04:05 GMT 2024 / Jan 2 2024 */
const MONTH_FIRST = /^(?:[a-z]{3},?\s+)?([a-z]{3})[a-z]*\.?\s+(\d{1,2}),?\s+(?:(\d{1,2}):(\d{2})(?::(\d{2}))?\s+(?:(UTC|GMT|Z)\s+)?)?(\d{4})(?:\s|$)/i;

export function toIsoDate(input: string): string | null {
  const value = input.trim();
  if (value === '') return null;
  let m = YMD.exec(value);
  if (m) {
    const tz = offset(m[7]);
    if (tz === null) return null;
    return build(Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4] ?? 0), Number(m[5] ?? 0), Number(m[6] ?? 0), tz);
  }
  m = DMONY.exec(value);
  if (m) {
    const month = MONTHS[m[2]!.toLowerCase()];
    const tz = offset(m[7]);
    if (month === undefined || tz === null) return null;
    return build(Number(m[3]), month, Number(m[1]), Number(m[4] ?? 0), Number(m[5] ?? 0), Number(m[6] ?? 0), tz);
  }
  m = DMY_DOTS.exec(value);
  if (m) {
    const tz = offset(m[7]);
    if (tz === null) return null;
    return build(Number(m[3]), Number(m[2]), Number(m[1]), Number(m[4] ?? 0), Number(m[5] ?? 0), Number(m[6] ?? 0), tz);
  }
  m = COMPACT.exec(value);
  if (m) return build(Number(m[1]), Number(m[2]), Number(m[3]));
  m = MONTH_FIRST.exec(value);
  if (m) {
    const month = MONTHS[m[1]!.toLowerCase()];
    if (month === undefined) return null;
    return build(Number(m[7]), month, Number(m[2]), Number(m[3] ?? 0), Number(m[4] ?? 0), Number(m[5] ?? 0), 0);
  }
  return null;
}
