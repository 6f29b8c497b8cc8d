import { TargetForbiddenError, ValidationError } from '../errors.js';

/**
 * docs/api.md, "Bulk calls": in a proxy, IP or DNS bulk, an entry that is not
 * valid, or whose target is forbidden, gets an item in its place carrying these two fields, and
 * every other entry is still answered. Only the array itself being wrong is a 400.
 */
export interface EntryError {
  /** A sentence naming the entry (`proxies[3]`) and the rule it broke. */
  error: string;
  error_code: 'validation_error' | 'target_forbidden';
}

/** The refusal of the entry named `field` as its item's fields; null when `err` is no refusal of an entry (the caller throws it). */
export function entryError(err: unknown, field: string): EntryError | null {
  let code: EntryError['error_code'];
  if (err instanceof ValidationError) code = 'validation_error';
  else if (err instanceof TargetForbiddenError) code = 'target_forbidden';
  else return null;
  return { error: err.message.startsWith(`${field}:`) ? err.message : `${field}: ${err.message}`, error_code: code };
}

/** `work` for the entry named `field`: its value, or its refusal as an EntryError; any other failure is thrown. */
export async function settleEntry<T>(field: string, work: () => T | Promise<T>): Promise<{ value: T } | { refused: EntryError }> {
  try {
    return { value: await work() };
  } catch (err) {
    const refused = entryError(err, field);
    if (refused === null) throw err;
    return { refused };
  }
}
