import { tooDeepAt } from '../../lib/json-depth.js';
import { RDAP_MAX_FIELD_CHARS, RDAP_MAX_JSON_DEPTH, RDAP_MAX_LIST } from './defaults.js';

/**
 * RDAP answers are JSON from strangers: the nesting is counted on the text before JSON.parse
 * builds anything (one linear pass), and every value read afterwards is checked for its type:
 * nothing here trusts a shape. Lists are cut at RDAP_MAX_LIST items, strings at
 * RDAP_MAX_FIELD_CHARS characters.
 */

export type JsonObject = Record<string, unknown>;

export function parseJsonText(text: string, maxDepth = RDAP_MAX_JSON_DEPTH): { value: unknown } | { error: string } {
  const deep = tooDeepAt(text, maxDepth);
  if (deep >= 0) return { error: `JSON nested more than ${maxDepth} levels deep (at offset ${deep})` };
  try {
    return { value: JSON.parse(text) as unknown };
  } catch {
    return { error: 'not valid JSON' };
  }
}

export function obj(value: unknown): JsonObject | null {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as JsonObject) : null;
}

/** An own property only: a key "__proto__" or "constructor" in the JSON is data, never the prototype's. */
export function field(o: JsonObject | null, key: string): unknown {
  return o !== null && Object.hasOwn(o, key) ? o[key] : undefined;
}

export function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value.slice(0, RDAP_MAX_LIST) : [];
}

/** A non-empty string, trimmed and cut at RDAP_MAX_FIELD_CHARS, or null. */
export function str(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const s = value.slice(0, RDAP_MAX_FIELD_CHARS).trim();
  return s === '' ? null : s;
}

export function strings(value: unknown): string[] {
  const out: string[] = [];
  for (const item of list(value)) {
    const s = str(item);
    if (s !== null) out.push(s);
  }
  return out;
}
