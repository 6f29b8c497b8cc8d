import type { Kysely } from 'kysely';
import type { DatabaseSchema } from './schema.js';
import type { JudgeRepository, NonceUse } from '../../domain/proxy/judge-repository.js';

/** The name the judge's signing secret is stored under in `secrets`. */
export const JUDGE_SECRET_NAME = 'judge';
/** The name, in `secrets`, of the judge URL an API instance recorded (not a secret: a value every process agrees on). */
export const JUDGE_URL_NAME = 'judge_url';

const NONCE_USES: readonly NonceUse[] = ['echo', 'download', 'upload'];

/**
 * The judge's shared state on either backend. Single use is the primary key's doing: of every
 * insert of one (nonce, use), on any connection of any instance, exactly one inserts a row.
 */
export function judgeRepository(db: Kysely<DatabaseSchema>): JudgeRepository {
  return {
    async secret(candidate) {
      await db
        .insertInto('secrets')
        .values({ name: JUDGE_SECRET_NAME, value: candidate, created_at: new Date().toISOString() })
        .onConflict((oc) => oc.column('name').doNothing())
        .execute();
      const row = await db.selectFrom('secrets').select('value').where('name', '=', JUDGE_SECRET_NAME).executeTakeFirstOrThrow();
      return row.value;
    },
    async spend(id, use, expiresAt) {
      const result = await db
        .insertInto('judge_nonce_uses')
        .values({ id, kind: use, expires_at: expiresAt })
        .onConflict((oc) => oc.doNothing())
        .executeTakeFirst();
      return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
    },
    async spendAll(nonces) {
      if (nonces.length === 0) return;
      const rows = nonces.flatMap(({ id, expiresAt }) => NONCE_USES.map((kind) => ({ id, kind, expires_at: expiresAt })));
      await db.insertInto('judge_nonce_uses').values(rows).onConflict((oc) => oc.doNothing()).execute();
    },
    async purge(before) {
      const result = await db.deleteFrom('judge_nonce_uses').where('expires_at', '<=', before).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
    async recordUrl(url) {
      const row = { name: JUDGE_URL_NAME, value: url, created_at: new Date().toISOString() };
      await db
        .insertInto('secrets')
        .values(row)
        .onConflict((oc) => oc.column('name').doUpdateSet({ value: row.value, created_at: row.created_at }))
        .execute();
    },
    async recordedUrl() {
      const row = await db.selectFrom('secrets').select('value').where('name', '=', JUDGE_URL_NAME).executeTakeFirst();
      return row?.value ?? null;
    },
  };
}
