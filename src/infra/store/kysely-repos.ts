import type { Kysely } from 'kysely';
import type { DatabaseSchema } from './schema.js';
import type { Account, AccountRepository, JudgeRepository, NonceUse, Token, TokenRepository } from './store.js';

/** The repositories both backends share: plain Kysely, the same SQL on SQLite and PostgreSQL. */

export const ACCOUNT_COLUMNS = ['id', 'name', 'email', 'plan', 'status', 'created_at'] as const;
export const TOKEN_COLUMNS = ['id', 'account_id', 'label', 'prefix', 'created_at', 'last_used_at', 'revoked_at'] as const;

export function asAccount(row: Record<string, unknown>): Account {
  return {
    id: Number(row.id),
    name: row.name as string,
    email: row.email as string,
    plan: row.plan as string,
    status: row.status as Account['status'],
    created_at: row.created_at as string,
  };
}

/**
 * Announces a change to whoever caches authentication (PostgreSQL: NOTIFY), inside the change's
 * own transaction, so the announcement goes out exactly when the change commits.
 */
export type AnnounceWrite = (trx: Kysely<DatabaseSchema>) => Promise<void>;

/** `work` on its own, or with `announce` in one transaction when a backend announces its writes. */
async function announced<T>(db: Kysely<DatabaseSchema>, announce: AnnounceWrite | undefined, work: (q: Kysely<DatabaseSchema>) => Promise<T>): Promise<T> {
  if (!announce) return work(db);
  return db.transaction().execute(async (trx) => {
    const result = await work(trx);
    await announce(trx);
    return result;
  });
}

/**
 * `onWrite` runs before every change, so a backend can drop what it cached; `announce` tells
 * the other instances (see AnnounceWrite).
 */
export function kyselyAccounts(db: Kysely<DatabaseSchema>, onWrite: () => void = () => {}, announce?: AnnounceWrite): AccountRepository {
  return {
    async create(account) {
      const row = await db.insertInto('accounts').values({ ...account, status: 'active' }).returning(ACCOUNT_COLUMNS).executeTakeFirstOrThrow();
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
      onWrite();
      const row = await announced(db, announce, (q) =>
        q.updateTable('accounts').set(changes).where('id', '=', id).returning(ACCOUNT_COLUMNS).executeTakeFirst(),
      );
      return row && asAccount(row);
    },
  };
}

export function asToken(row: Record<string, unknown>): Token {
  return {
    id: Number(row.id),
    account_id: Number(row.account_id),
    label: row.label as string,
    prefix: (row.prefix as string | null | undefined) ?? null,
    created_at: row.created_at as string,
    last_used_at: (row.last_used_at as string | null) ?? null,
    revoked_at: (row.revoked_at as string | null) ?? null,
  };
}

/** Everything but the hot path (findByHash) and touch, which each backend does its own way. */
export function kyselyTokens(
  db: Kysely<DatabaseSchema>,
  onWrite: () => void = () => {},
  announce?: AnnounceWrite,
): Omit<TokenRepository, 'findByHash' | 'touch'> {
  return {
    async create(token) {
      return asToken(await db.insertInto('tokens').values(token).returning(TOKEN_COLUMNS).executeTakeFirstOrThrow());
    },
    async findById(id) {
      const row = await db.selectFrom('tokens').select(TOKEN_COLUMNS).where('id', '=', id).executeTakeFirst();
      return row && asToken(row);
    },
    async listByAccount(accountId) {
      return (await db.selectFrom('tokens').select(TOKEN_COLUMNS).where('account_id', '=', accountId).orderBy('id').execute()).map(asToken);
    },
    async revoke(id, at) {
      onWrite();
      const row = await announced(db, announce, (q) =>
        q
          .updateTable('tokens')
          .set({ revoked_at: at })
          .where('id', '=', id)
          .where('revoked_at', 'is', null)
          .returning(TOKEN_COLUMNS)
          .executeTakeFirst(),
      );
      return row && asToken(row);
    },
  };
}

/** The name the judge's signing secret is stored under in `secrets`. */
export const JUDGE_SECRET_NAME = 'judge';

const NONCE_USES: readonly NonceUse[] = ['echo', 'download', 'upload'];

/**
 * The judge's shared state on either backend. Single use is the primary key's doing: of every
 * insert of one (nonce, use), on any connection of any instance, exactly one inserts a row.
 */
export function kyselyJudge(db: Kysely<DatabaseSchema>): JudgeRepository {
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
  };
}

/** How often batched last_used_at updates reach the database (both backends). */
export const TOKEN_TOUCH_FLUSH_MS = 5_000;

/** last_used_at is informational: updates are collected and written in one go now and then. */
export class TouchBuffer {
  private readonly pending = new Map<number, number>();
  private readonly timer: NodeJS.Timeout;
  /**
   * Told of a failed timed flush; its touches were put back and go out with the next one. Only
   * the first failure of a run is told: a database that is down for a minute is one log line.
   */
  onError: (err: unknown) => void = () => {};
  private failing = false;

  constructor(private readonly write: (touches: Array<[number, string]>) => Promise<void> | void) {
    // A failed write (database busy or down) must not become an unhandled rejection, which
    // would end the process: it is reported, and retried at the next flush.
    this.timer = setInterval(
      () =>
        this.flush().then(
          () => (this.failing = false),
          (err: unknown) => {
            if (!this.failing) this.onError(err);
            this.failing = true;
          },
        ),
      TOKEN_TOUCH_FLUSH_MS,
    );
    this.timer.unref();
  }

  touch(id: number, at: number): void {
    this.pending.set(id, at);
  }

  async flush(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = [...this.pending];
    this.pending.clear();
    try {
      await this.write(batch.map(([id, at]): [number, string] => [id, new Date(at).toISOString()]));
    } catch (err) {
      // A newer touch of the same token, made while this one was being written, wins.
      for (const [id, at] of batch) if (!this.pending.has(id)) this.pending.set(id, at);
      throw err;
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}
