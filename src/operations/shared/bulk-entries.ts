import { Type } from 'typebox';

/**
 * The fields a bulk item carries in place of a refused entry (docs/api.md "Bulk calls agree on bad
 * entries"), the same for proxies, IPs and domains: `error` names the entry and the rule.
 */
export const ENTRY_ERROR_CODES = ['validation_error', 'target_forbidden'] as const;

export const EntryErrorCode = Type.Optional(
  Type.Enum([...ENTRY_ERROR_CODES], {
    description: 'only on an entry that was refused: validation_error (not valid) or target_forbidden (its target is in a blocked range)',
  }),
);

export const EntryError = Type.String({ description: 'why this entry was refused: names the entry by its index (`domains[3]: …`) and the rule' });

/**
 * An entry of a bulk array: any string. Its own rules (length included) are checked per entry,
 * so a bad one is its item's error, not the request's 400; the array's bounds and the body limit
 * still hold.
 */
export const BulkEntry = (description: string) => Type.String({ description });
