/**
 * Small scanners for WHOIS text, in place of regular expressions whose backtracking is
 * quadratic on what a hostile server can send (runs of white space before a URL, a "[tag ="
 * suffix, a key). Each reads its input once, left to right.
 */

/** JavaScript's `\s` (WhiteSpace and LineTerminator), so the scanners agree with trim(). */
function isSpace(code: number): boolean {
  return (
    code === 0x20 ||
    (code >= 0x09 && code <= 0x0d) ||
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0xfeff
  );
}

/** What `.` does not match (without the s flag). */
function isLineTerminator(code: number): boolean {
  return code === 0x0a || code === 0x0d || code === 0x2028 || code === 0x2029;
}

function isAsciiLetter(code: number): boolean {
  return (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a);
}

/** [A-Za-z0-9 ._/()&'-]: what a key may be made of. */
function isKeyChar(code: number): boolean {
  return (
    isAsciiLetter(code) ||
    (code >= 0x30 && code <= 0x39) ||
    code === 0x20 ||
    code === 0x2e || // .
    code === 0x5f || // _
    code === 0x2f || // /
    code === 0x28 || // (
    code === 0x29 || // )
    code === 0x26 || // &
    code === 0x27 || // '
    code === 0x2d // -
  );
}

/** Longest key: a letter and 79 more key characters. */
const MAX_KEY_CHARS = 80;

export interface KeyLine {
  /** The white space before the key. */
  indent: string;
  /** The key as written, without the white space before the colon. */
  key: string;
  /** What follows the colon and the white space after it ('' when nothing does). */
  value: string;
}

/**
 * A `Key: value` line, or null. The key starts with a letter and is at most 80 key characters;
 * white space may stand between it and the colon; the colon ends the line or is followed by
 * white space (so "https://..." and "10:20" are not keys). The same lines as
 * /^(\s*)([A-Za-z][A-Za-z0-9 ._\/()&'-]{0,79}?)\s*:(?:\s+(.*))?$/ matches, in one pass.
 */
export function keyLine(line: string): KeyLine | null {
  const n = line.length;
  let i = 0;
  while (i < n && isSpace(line.charCodeAt(i))) i++;
  const keyStart = i;
  if (i >= n || !isAsciiLetter(line.charCodeAt(i))) return null;
  // Neither a key character nor white space is a colon, so the first colon is the only candidate.
  let keyEnd = keyStart;
  for (; i < n; i++) {
    const c = line.charCodeAt(i);
    if (c === 0x3a) break;
    if (isSpace(c)) continue;
    if (!isKeyChar(c)) return null;
    // A non-space character: the key reaches at least this far, and so does everything before it.
    keyEnd = i + 1;
  }
  if (i >= n) return null;
  const colon = i;
  if (keyEnd - keyStart > MAX_KEY_CHARS) return null;
  for (let k = keyStart; k < keyEnd; k++) if (!isKeyChar(line.charCodeAt(k))) return null;
  let v = colon + 1;
  if (v < n && !isSpace(line.charCodeAt(v))) return null;
  while (v < n && isSpace(line.charCodeAt(v))) v++;
  for (let k = v; k < n; k++) if (isLineTerminator(line.charCodeAt(k))) return null;
  return { indent: line.slice(0, keyStart), key: line.slice(keyStart, keyEnd), value: line.slice(v) };
}

/** "http://" or "https://" at `at`, any case: the index after "//", or -1. */
function urlSchemeEnd(text: string, at: number): number {
  const lower = (k: number): number => text.charCodeAt(k) | 0x20;
  if (at + 7 > text.length || lower(at) !== 0x68 || lower(at + 1) !== 0x74 || lower(at + 2) !== 0x74 || lower(at + 3) !== 0x70) return -1;
  let k = at + 4;
  if (lower(k) === 0x73) k++;
  return text.startsWith('://', k) ? k + 3 : -1;
}

/**
 * The text without its http(s) URLs, each with the white space and the one "(" before it
 * (and its closing ")", which is part of the URL's non-space run): what
 * value.replace(/\(?\s*https?:\/\/\S*\)?/gi, '') gives, in one pass.
 */
export function withoutUrls(text: string): string {
  let out = '';
  let copied = 0;
  for (let i = 0; i < text.length; i++) {
    const afterScheme = urlSchemeEnd(text, i);
    if (afterScheme < 0) continue;
    let start = i;
    while (start > copied && isSpace(text.charCodeAt(start - 1))) start--;
    if (start > copied && text.charCodeAt(start - 1) === 0x28) start--;
    let end = afterScheme;
    while (end < text.length && !isSpace(text.charCodeAt(end))) end++;
    out += text.slice(copied, start);
    copied = end;
    i = end - 1;
  }
  return copied === 0 ? text : out + text.slice(copied);
}

/**
 * The text without a trailing "[Tag = ...]" (Nominet's registrar tag), white space around it
 * included: what value.replace(/\s*\[tag\s*=[^\]]*\]\s*$/i, '') gives, in one pass.
 */
export function withoutTrailingTag(text: string): string {
  let end = text.length;
  while (end > 0 && isSpace(text.charCodeAt(end - 1))) end--;
  if (end === 0 || text.charCodeAt(end - 1) !== 0x5d) return text;
  const close = end - 1;
  // No "]" between the tag's "=" and the closing one: the tag opens after any earlier "]".
  const floor = text.lastIndexOf(']', close - 1) + 1;
  for (let open = text.indexOf('[', floor); open >= 0 && open < close; open = text.indexOf('[', open + 1)) {
    if (text.slice(open + 1, open + 4).toLowerCase() !== 'tag') continue;
    let k = open + 4;
    while (k < close && isSpace(text.charCodeAt(k))) k++;
    if (k >= close || text.charCodeAt(k) !== 0x3d) continue;
    let start = open;
    while (start > 0 && isSpace(text.charCodeAt(start - 1))) start--;
    return text.slice(0, start);
  }
  return text;
}

/** The text without the line feeds at its end (in place of .replace(/\n+$/, '')). */
export function withoutTrailingNewlines(text: string): string {
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 0x0a) end--;
  return text.slice(0, end);
}
