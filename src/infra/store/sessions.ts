import type { Kysely } from 'kysely';
import { JOINED_ACCOUNT_COLUMNS, asAccount, joinedColumns, joinedRow } from './rows.js';
import type { DatabaseSchema } from './schema.js';
import type { Account, Session, SessionRepository } from '../../domain/accounts/repositories.js';

const SESSION_COLUMNS = ['id', 'account_id', 'created_at', 'last_seen_at', 'expires_at', 'user_agent', 'ip', 'revoked_at'] as const;

/** A dashboard session and its account, by the session's id (every dashboard page looks its session up). */
function sessionByIdQuery(db: Kysely<DatabaseSchema>, id: string) {
  return db
    .selectFrom('sessions as s')
    .innerJoin('accounts as a', 'a.id', 's.account_id')
    .select([...joinedColumns('s', SESSION_COLUMNS), ...JOINED_ACCOUNT_COLUMNS])
    .where('s.id', '=', id);
}

/** A row of sessionByIdQuery as the session and its account. */
function asSessionWithAccount(r: Record<string, unknown>): { session: Session; account: Account } {
  return { session: asSession(joinedRow(r, 's')), account: asAccount(r) };
}

function asSession(row: Record<string, unknown>): Session {
  return {
    id: row.id as string,
    account_id: Number(row.account_id),
    created_at: row.created_at as string,
    last_seen_at: row.last_seen_at as string,
    expires_at: row.expires_at as string,
    user_agent: row.user_agent as string,
    ip: row.ip as string,
    revoked_at: (row.revoked_at as string | null) ?? null,
  };
}

/** Dashboard sessions on either backend; never cached, so a revocation anywhere holds at the next request. */
export function sessionRepository(db: Kysely<DatabaseSchema>): SessionRepository {
  return {
    async create(session) {
      return asSession(await db.insertInto('sessions').values(session).returning(SESSION_COLUMNS).executeTakeFirstOrThrow());
    },
    async find(id) {
      const r = await sessionByIdQuery(db, id).executeTakeFirst();
      return r && asSessionWithAccount(r);
    },
    async touch(id, lastSeenAt, expiresAt) {
      await db.updateTable('sessions').set({ last_seen_at: lastSeenAt, expires_at: expiresAt }).where('id', '=', id).execute();
    },
    async revoke(id, at) {
      await db.updateTable('sessions').set({ revoked_at: at }).where('id', '=', id).where('revoked_at', 'is', null).execute();
    },
    async revokeAll(accountId, at, exceptId) {
      let q = db.updateTable('sessions').set({ revoked_at: at }).where('account_id', '=', accountId).where('revoked_at', 'is', null);
      if (exceptId !== undefined) q = q.where('id', '!=', exceptId);
      return Number((await q.executeTakeFirst()).numUpdatedRows);
    },
    async listActive(accountId, now) {
      const rows = await db
        .selectFrom('sessions')
        .select(SESSION_COLUMNS)
        .where('account_id', '=', accountId)
        .where('revoked_at', 'is', null)
        .where('expires_at', '>', now)
        .orderBy('last_seen_at', 'desc')
        .execute();
      return rows.map(asSession);
    },
    async purge(before) {
      const result = await db
        .deleteFrom('sessions')
        .where((eb) => eb.or([eb('expires_at', '<', before), eb('revoked_at', '<', before)]))
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
