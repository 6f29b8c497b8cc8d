/** JSON nesting, counted on the text before JSON.parse builds anything (request bodies, RDAP answers). */

/**
 * The offset of the first `[` or `{` that opens a level deeper than `max`, or -1: one pass over
 * the raw text (brackets inside strings are not nesting), before JSON.parse builds anything.
 * Well-formedness is JSON.parse's business; this only counts.
 */
export function tooDeepAt(text: string, max: number): number {
  if (text.length <= max) return -1;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // A string, skipped by indexOf to its closing quote: one not escaped by an odd run of
      // backslashes (the runs between one quote and the next are looked at once: linear).
      for (;;) {
        const end = text.indexOf('"', i + 1);
        if (end < 0) return -1;
        let slashes = 0;
        while (text.charCodeAt(end - 1 - slashes) === 0x5c) slashes++;
        i = end;
        if (slashes % 2 === 0) break;
      }
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return i;
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
  return -1;
}
