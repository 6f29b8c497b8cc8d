import { sql, type Kysely } from 'kysely';
import type { AuthCache } from './auth-cache.js';
import { ACCOUNT_COLUMNS, asAccount } from './rows.js';
import type { DatabaseSchema } from './schema.js';
import type { Account, AccountRepository } from '../../domain/accounts/repositories.js';

/** `changes` as columns: SQLite has no boolean, so is_admin is stored as 0/1 on both backends. */
function accountColumns(changes: Partial<Pick<Account, 'plan' | 'status' | 'name' | 'is_admin'>>) {
  const { is_admin, ...rest } = changes;
  return is_admin === undefined ? rest : { ...rest, is_admin: is_admin ? 1 : 0 };
}

/** `text` as a LIKE pattern that matches it literally, anywhere. */
function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** Accounts; a change of one goes through the authentication cache, which holds accounts beside tokens. */
export function accountRepository(db: Kysely<DatabaseSchema>, authCache: AuthCache): AccountRepository {
  return {
    async create(account) {
      const { is_admin = false, password_hash = null, ...rest } = account;
      const row = await db
        .insertInto('accounts')
        .values({ ...rest, status: 'active', is_admin: is_admin ? 1 : 0, password_hash })
        .returning(ACCOUNT_COLUMNS)
        .executeTakeFirstOrThrow();
      return asAccount(row);
    },
    async findById(id) {
      const row = await db.selectFrom('accounts').select(ACCOUNT_COLUMNS).where('id', '=', id).executeTakeFirst();
      return row && asAccount(row);
    },
    async findByEmail(email) {
      const row = await db.selectFrom('accounts').select(ACCOUNT_COLUMNS).where('email', '=', email).executeTakeFirst();
      return row && asAccount(row);
    },
    async list() {
      return (await db.selectFrom('accounts').select(ACCOUNT_COLUMNS).orderBy('id').execute()).map(asAccount);
    },
    async count() {
      const row = await db.selectFrom('accounts').select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
      return Number(row.n);
    },
    async update(id, changes) {
      const row = await authCache.write(db, (q) =>
        q.updateTable('accounts').set(accountColumns(changes)).where('id', '=', id).returning(ACCOUNT_COLUMNS).executeTakeFirst(),
      );
      return row && asAccount(row);
    },
    async search(text, limit) {
      let q = db.selectFrom('accounts').select(ACCOUNT_COLUMNS).orderBy('id').limit(limit);
      const needle = text.trim().toLowerCase();
      if (needle) {
        const pattern = containsPattern(needle);
        q = q.where((eb) =>
          eb.or([eb(eb.fn('lower', ['email']), 'like', sql<string>`${pattern} escape '\\'`), eb(eb.fn('lower', ['name']), 'like', sql<string>`${pattern} escape '\\'`)]),
        );
      }
      return (await q.execute()).map(asAccount);
    },
    async passwordHash(id) {
      const row = await db.selectFrom('accounts').select('password_hash').where('id', '=', id).executeTakeFirst();
      return row?.password_hash ?? null;
    },
    async setPasswordHash(id, hash) {
      await db.updateTable('accounts').set({ password_hash: hash }).where('id', '=', id).execute();
    },
  };
}
