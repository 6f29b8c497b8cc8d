import type { Kysely } from 'kysely';
import type { DatabaseSchema } from './schema.js';
import type { AuthLink, AuthLinkRepository } from '../../domain/accounts/repositories.js';

const LINK_COLUMNS = ['hash', 'kind', 'account_id', 'email', 'plan', 'created_by', 'created_at', 'expires_at', 'used_at'] as const;

function asLink(row: Record<string, unknown>): AuthLink {
  return {
    hash: row.hash as string,
    kind: row.kind as AuthLink['kind'],
    account_id: row.account_id === null || row.account_id === undefined ? null : Number(row.account_id),
    email: (row.email as string | null) ?? null,
    plan: (row.plan as string | null) ?? null,
    created_by: row.created_by === null || row.created_by === undefined ? null : Number(row.created_by),
    created_at: row.created_at as string,
    expires_at: row.expires_at as string,
    used_at: (row.used_at as string | null) ?? null,
  };
}

/** One-time links (password, invitation); consume is one conditional update, so a link is used once. */
export function authLinkRepository(db: Kysely<DatabaseSchema>): AuthLinkRepository {
  return {
    async create(link) {
      return asLink(await db.insertInto('auth_links').values(link).returning(LINK_COLUMNS).executeTakeFirstOrThrow());
    },
    async find(hash) {
      const row = await db.selectFrom('auth_links').select(LINK_COLUMNS).where('hash', '=', hash).executeTakeFirst();
      return row && asLink(row);
    },
    async consume(hash, at) {
      // One statement: of two concurrent uses of one link exactly one updates the row.
      const result = await db
        .updateTable('auth_links')
        .set({ used_at: at })
        .where('hash', '=', hash)
        .where('used_at', 'is', null)
        .where('expires_at', '>', at)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
    async listInvites(limit) {
      const rows = await db.selectFrom('auth_links').select(LINK_COLUMNS).where('kind', '=', 'invite').orderBy('created_at', 'desc').limit(limit).execute();
      return rows.map(asLink);
    },
  };
}
