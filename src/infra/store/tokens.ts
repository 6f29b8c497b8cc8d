import type { Kysely } from 'kysely';
import type { AuthCache } from './auth-cache.js';
import { JOINED_ACCOUNT_COLUMNS, asAccount, joinedColumns, joinedRow } from './rows.js';
import type { DatabaseSchema } from './schema.js';
import type { Account, Token, TokenRepository } from '../../domain/accounts/repositories.js';

const TOKEN_COLUMNS = ['id', 'account_id', 'label', 'prefix', 'created_at', 'last_used_at', 'revoked_at', 'expires_at'] as const;

function asToken(row: Record<string, unknown>): Token {
  return {
    id: Number(row.id),
    account_id: Number(row.account_id),
    label: row.label as string,
    prefix: (row.prefix as string | null | undefined) ?? null,
    created_at: row.created_at as string,
    last_used_at: (row.last_used_at as string | null) ?? null,
    revoked_at: (row.revoked_at as string | null) ?? null,
    expires_at: (row.expires_at as string | null | undefined) ?? null,
  };
}

/**
 * A token and its account, by the token's hash: the authentication hot path, one indexed join
 * (answered from the authentication cache but for the first request of a token).
 */
function tokenByHashQuery(db: Kysely<DatabaseSchema>, hash: string) {
  return db
    .selectFrom('tokens as t')
    .innerJoin('accounts as a', 'a.id', 't.account_id')
    .select([...joinedColumns('t', TOKEN_COLUMNS), ...JOINED_ACCOUNT_COLUMNS])
    .where('t.hash', '=', hash);
}

/** A row of tokenByHashQuery as the token and its account. */
function asTokenWithAccount(r: Record<string, unknown>): { token: Token; account: Account } {
  return { token: asToken(joinedRow(r, 't')), account: asAccount(r) };
}

/**
 * Tokens. findByHash goes through the authentication cache; last-used times are collected in
 * `touches` and written in one go now and then (see TouchBuffer, writeTouches).
 */
export function tokenRepository(db: Kysely<DatabaseSchema>, authCache: AuthCache, touches: TouchBuffer): TokenRepository {
  const lookup = async (hash: string) => {
    const r = await tokenByHashQuery(db, hash).executeTakeFirst();
    return r && asTokenWithAccount(r);
  };
  return {
    async create(token) {
      return asToken(await db.insertInto('tokens').values(token).returning(TOKEN_COLUMNS).executeTakeFirstOrThrow());
    },
    findByHash: (hash) => authCache.find(hash, () => lookup(hash)),
    async findById(id) {
      const row = await db.selectFrom('tokens').select(TOKEN_COLUMNS).where('id', '=', id).executeTakeFirst();
      return row && asToken(row);
    },
    async listByAccount(accountId) {
      return (await db.selectFrom('tokens').select(TOKEN_COLUMNS).where('account_id', '=', accountId).orderBy('id').execute()).map(asToken);
    },
    async revoke(id, at) {
      const row = await authCache.write(db, (q) =>
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
    touch(id, at) {
      touches.touch(id, at);
    },
  };
}

/** The writer of a TouchBuffer: a batch of last-used times in one transaction. */
export function writeTouches(db: Kysely<DatabaseSchema>): (batch: Array<[number, string]>) => Promise<void> {
  return (batch) =>
    db.transaction().execute(async (trx) => {
      for (const [id, at] of batch) await trx.updateTable('tokens').set({ last_used_at: at }).where('id', '=', id).execute();
    });
}

/** How often batched last_used_at updates reach the database (both backends). */
export const TOKEN_TOUCH_FLUSH_MS = 5_000;

/**
 * last_used_at is informational: updates are collected and written in one go now and then. Kept
 * for its figure: BENCHMARKS.md, "Speed tricks", row "token last-used buffer".
 */
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
