import { parseIpStrict } from '../../net/ip-text.js';

/**
 * The tokens the path tools print, read strictly: each pattern has no nested or adjacent
 * unbounded repetition, and every count is bounded (test/security/regex-linear.test.ts).
 */

const COUNT = /^\d{1,9}$/;
const DECIMAL = /^\d{1,9}(?:\.\d{1,6})?$/;

/** A non-negative integer as printed (`62`), or null. */
export function countOf(token: string | undefined): number | null {
  return token !== undefined && COUNT.test(token) ? Number(token) : null;
}

/** A non-negative decimal as printed (`0.058`, `1011`), or null. */
export function decimalOf(token: string | undefined): number | null {
  return token !== undefined && DECIMAL.test(token) ? Number(token) : null;
}

/** A numeric address as printed, in its canonical spelling (RFC 5952 for IPv6), or null. */
export function addressOf(token: string | undefined): string | null {
  if (token === undefined || token.length > 45) return null;
  return parseIpStrict(token)?.toString() ?? null;
}

/** The tokens of a line: the runs of characters between spaces (and tabs). Linear. */
export function tokens(line: string): string[] {
  return line.split(/[ \t]/).filter((t) => t !== '');
}
