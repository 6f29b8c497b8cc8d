/**
 * Retry-After as RFC 9110 (10.2.3) defines it: delta-seconds or an HTTP-date, the date in any of
 * the three forms a recipient must accept (IMF-fixdate, the obsolete RFC 850 and asctime forms).
 * The value comes from whoever answered: it is bounded before it is looked at, and every pattern
 * is anchored with no nested repetition, so parsing is linear in its (short) length.
 */

/** Longer than any HTTP-date (29 characters) or sane delta-seconds: not a Retry-After. */
export const RETRY_AFTER_MAX_CHARS = 64;

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const DELTA_SECONDS = /^[0-9]+$/;
/** Sun, 06 Nov 1994 08:49:37 GMT */
const IMF_FIXDATE = /^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), ([0-9]{2}) ([A-Z][a-z]{2}) ([0-9]{4}) ([0-9]{2}):([0-9]{2}):([0-9]{2}) GMT$/;
/** Sunday, 06-Nov-94 08:49:37 GMT */
const RFC850_DATE = /^(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), ([0-9]{2})-([A-Z][a-z]{2})-([0-9]{2}) ([0-9]{2}):([0-9]{2}):([0-9]{2}) GMT$/;
/** Sun Nov  6 08:49:37 1994 */
const ASCTIME_DATE = /^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) ([A-Z][a-z]{2}) ([0-9 ][0-9]) ([0-9]{2}):([0-9]{2}):([0-9]{2}) ([0-9]{4})$/;

/** Epoch ms of the date's parts, or null when they name no such moment (31 Feb, 25:00). */
function utc(year: number, monthName: string, day: number, hour: number, minute: number, second: number): number | null {
  const month = MONTHS.indexOf(monthName);
  if (month < 0 || hour > 23 || minute > 59 || second > 60) return null;
  // A leap second (:60) is the moment after :59.
  const at = Date.UTC(year, month, day, hour, minute, Math.min(second, 59));
  const d = new Date(at);
  if (d.getUTCFullYear() !== year || d.getUTCMonth() !== month || d.getUTCDate() !== day) return null;
  return second === 60 ? at + 1_000 : at;
}

/** An HTTP-date's epoch ms, or null when it is none. `now` places an RFC 850 two-digit year. */
export function parseHttpDate(value: string, now: number): number | null {
  if (value.length > RETRY_AFTER_MAX_CHARS) return null;
  let m = IMF_FIXDATE.exec(value);
  if (m) return utc(Number(m[3]), m[2]!, Number(m[1]), Number(m[4]), Number(m[5]), Number(m[6]));
  m = RFC850_DATE.exec(value);
  if (m) {
    // RFC 9110: a two-digit year that would be more than 50 years ahead is the last such year past.
    const thisYear = new Date(now).getUTCFullYear();
    let year = thisYear - (thisYear % 100) + Number(m[3]);
    if (year > thisYear + 50) year -= 100;
    return utc(year, m[2]!, Number(m[1]), Number(m[4]), Number(m[5]), Number(m[6]));
  }
  m = ASCTIME_DATE.exec(value);
  if (m) return utc(Number(m[6]), m[1]!, Number(m[2]!.trim()), Number(m[3]), Number(m[4]), Number(m[5]));
  return null;
}

/**
 * How long (ms, 0 or more) a Retry-After asks to wait from `now`, at most `maxMs`; null when the
 * value is neither form (then it asks nothing). A date already past asks no wait (0).
 */
export function retryAfterMs(value: string, now: number, maxMs: number): number | null {
  if (value.length > RETRY_AFTER_MAX_CHARS) return null;
  const v = value.trim();
  if (v.length === 0) return null;
  if (DELTA_SECONDS.test(v)) {
    // Digits beyond what a double holds exactly are far past any cap anyway.
    const seconds = Number(v);
    return Math.min(seconds * 1_000, maxMs);
  }
  const at = parseHttpDate(v, now);
  if (at === null) return null;
  return Math.min(Math.max(0, at - now), maxMs);
}
