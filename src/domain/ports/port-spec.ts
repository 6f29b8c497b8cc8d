import { ValidationError } from '../../errors.js';
import { MAX_PORT, MIN_PORT } from '../../net/bounds.js';
import { MAX_PORTS_PER_JOB, MAX_PORTS_PER_SCAN, PORT_SPEC_ECHO_MAX_CHARS, PORT_SPEC_MAX_CHARS } from './defaults.js';

/**
 * The nmap-style `ports` string of docs/ports.md ("22,80,8000-8100"): comma-separated ports and
 * ranges, spaces and tabs tolerated around every number, expanded to the list the array form
 * would give (duplicates removed, sorted) under the same bound: `max`, MAX_PORTS_PER_SCAN for a
 * synchronous call, MAX_PORTS_PER_JOB for a job.
 *
 * One pass over the characters and no regular expression: the input is the client's, and the
 * work stays linear in its length however it is built. The bound is checked on merged ranges
 * before a single port is listed, so "1-65535" repeated a thousand times costs no more than once.
 */
export function parsePortSpec(spec: string, field = 'ports', max = MAX_PORTS_PER_SCAN): number[] {
  if (spec.length > PORT_SPEC_MAX_CHARS) throw new ValidationError(field, `at most ${PORT_SPEC_MAX_CHARS} characters`);
  const ranges: Array<[number, number]> = [];
  for (const raw of spec.split(',')) {
    const part = trimBlanks(raw);
    if (part === '') {
      throw new ValidationError(field, spec.trim() === '' ? 'must name at least one port, like "22,80,8000-8100"' : `${quote(spec)} has an empty entry between commas`);
    }
    ranges.push(rangeOf(part, field));
  }
  ranges.sort((a, b) => a[0] - b[0]);
  const merged: Array<[number, number]> = [];
  for (const [from, to] of ranges) {
    const last = merged[merged.length - 1];
    if (last && from <= last[1] + 1) last[1] = Math.max(last[1], to);
    else merged.push([from, to]);
  }
  const count = merged.reduce((n, [from, to]) => n + (to - from + 1), 0);
  if (count > max) throw new ValidationError(field, `at most ${max} ports, ${quote(spec)} expands to ${count}${asJob(max)}`);
  return merged.flatMap(([from, to]) => Array.from({ length: to - from + 1 }, (_, i) => from + i));
}

/** What to do about too many ports when a job would take them. */
export function asJob(max: number): string {
  return max < MAX_PORTS_PER_JOB ? `; a job (Prefer: respond-async) takes up to ${MAX_PORTS_PER_JOB}` : '';
}

/** "80" or "8000-8100" (blanks allowed around the dash) as [from, to]. */
function rangeOf(part: string, field: string): [number, number] {
  const dash = part.indexOf('-');
  if (dash === -1) {
    const port = portOf(part, part, field);
    return [port, port];
  }
  const from = portOf(trimBlanks(part.slice(0, dash)), part, field);
  const to = portOf(trimBlanks(part.slice(dash + 1)), part, field);
  if (from > to) throw new ValidationError(field, `${quote(part)} runs from high to low; write ${to}-${from}`);
  return [from, to];
}

/** A decimal port number, or ValidationError naming the entry it came from. */
function portOf(digits: string, part: string, field: string): number {
  if (digits === '') throw new ValidationError(field, `${quote(part)} is not a port or a range like 22 or 8000-8100`);
  let value = 0;
  for (let i = 0; i < digits.length; i++) {
    const code = digits.charCodeAt(i) - 48;
    if (code < 0 || code > 9) throw new ValidationError(field, `${quote(part)} is not a port or a range like 22 or 8000-8100`);
    // Past MAX_PORT the value only grows: stop counting, the message below is the same.
    if (value <= MAX_PORT) value = value * 10 + code;
  }
  if (value < MIN_PORT || value > MAX_PORT) throw new ValidationError(field, `${quote(part)}: a port must be between ${MIN_PORT} and ${MAX_PORT}`);
  return value;
}

function isBlank(code: number): boolean {
  return code === 32 || code === 9;
}

/** Without leading and trailing spaces and tabs (String#trim would also take newlines and NBSP). */
function trimBlanks(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && isBlank(text.charCodeAt(start))) start++;
  while (end > start && isBlank(text.charCodeAt(end - 1))) end--;
  return text.slice(start, end);
}

/** The client's text in quotes, cut short so a message never echoes a whole request. */
function quote(text: string): string {
  return JSON.stringify(text.length > PORT_SPEC_ECHO_MAX_CHARS ? `${text.slice(0, PORT_SPEC_ECHO_MAX_CHARS)}…` : text);
}
