import type { Account } from '../../domain/accounts/repositories.js';

/** Row shapes several repositories share: an account's columns, and an account joined beside another table's row. */

export const ACCOUNT_COLUMNS = ['id', 'name', 'email', 'plan', 'status', 'created_at', 'is_admin'] as const;
/** The account's columns in a join where it is `a` (the joined row's own id and created_at are renamed). */
export const JOINED_ACCOUNT_COLUMNS = ['a.id', 'a.name', 'a.email', 'a.plan', 'a.status', 'a.created_at', 'a.is_admin'] as const;

/** `columns` of the table joined as `alias` beside its account: id and created_at become `<alias>_id`, `<alias>_created_at`. */
type JoinedColumns<A extends string, C extends readonly string[]> = { [K in keyof C]: C[K] extends 'id' | 'created_at' ? `${A}.${C[K]} as ${A}_${C[K]}` : `${A}.${C[K]}` };

export function joinedColumns<A extends string, const C extends readonly string[]>(alias: A, columns: C): JoinedColumns<A, C> {
  return columns.map((c) => (c === 'id' || c === 'created_at' ? `${alias}.${c} as ${alias}_${c}` : `${alias}.${c}`)) as JoinedColumns<A, C>;
}

/** A row selected with joinedColumns(alias, …) with its own id and created_at under their names again. */
export function joinedRow(r: Record<string, unknown>, alias: string): Record<string, unknown> {
  return { ...r, id: r[`${alias}_id`], created_at: r[`${alias}_created_at`] };
}

export function asAccount(row: Record<string, unknown>): Account {
  return {
    id: Number(row.id),
    name: row.name as string,
    email: row.email as string,
    plan: row.plan as string,
    status: row.status as Account['status'],
    created_at: row.created_at as string,
    // 0/1 on SQLite, an integer on PostgreSQL too (the column is one on both).
    is_admin: Number(row.is_admin ?? 0) === 1,
  };
}
