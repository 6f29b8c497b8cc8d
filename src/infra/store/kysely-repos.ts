import { sql, type Kysely } from 'kysely';
import type { DatabaseSchema } from './schema.js';
import type { Account, AccountRepository, AuthLink, AuthLinkRepository, Session, SessionRepository, Token, TokenRepository } from '../../domain/accounts/repositories.js';
import type { JudgeRepository, NonceUse } from '../../domain/proxy/judge-repository.js';
import type { WebhookSecret, WebhookSecretRepository } from '../../domain/webhooks/repository.js';

/** The repositories both backends share: plain Kysely, the same SQL on SQLite and PostgreSQL. */

const ACCOUNT_COLUMNS = ['id', 'name', 'email', 'plan', 'status', 'created_at', 'is_admin'] as const;
const TOKEN_COLUMNS = ['id', 'account_id', 'label', 'prefix', 'created_at', 'last_used_at', 'revoked_at', 'expires_at'] as const;
/** The account's columns in a join where it is `a` (the joined row's own id and created_at are renamed). */
const JOINED_ACCOUNT_COLUMNS = ['a.id', 'a.name', 'a.email', 'a.plan', 'a.status', 'a.created_at', 'a.is_admin'] as const;

/** `columns` of the table joined as `alias` beside its account: id and created_at become `<alias>_id`, `<alias>_created_at`. */
type JoinedColumns<A extends string, C extends readonly string[]> = { [K in keyof C]: C[K] extends 'id' | 'created_at' ? `${A}.${C[K]} as ${A}_${C[K]}` : `${A}.${C[K]}` };

function joinedColumns<A extends string, const C extends readonly string[]>(alias: A, columns: C): JoinedColumns<A, C> {
  return columns.map((c) => (c === 'id' || c === 'created_at' ? `${alias}.${c} as ${alias}_${c}` : `${alias}.${c}`)) as JoinedColumns<A, C>;
}

/** A row selected with joinedColumns(alias, …) with its own id and created_at under their names again. */
function joinedRow(r: Record<string, unknown>, alias: string): Record<string, unknown> {
  return { ...r, id: r[`${alias}_id`], created_at: r[`${alias}_created_at`] };
}

function asAccount(row: Record<string, unknown>): Account {
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

/** `changes` as columns: SQLite has no boolean, so is_admin is stored as 0/1 on both backends. */
function accountColumns(changes: Partial<Pick<Account, 'plan' | 'status' | 'name' | 'is_admin'>>) {
  const { is_admin, ...rest } = changes;
  return is_admin === undefined ? rest : { ...rest, is_admin: is_admin ? 1 : 0 };
}

/** `text` as a LIKE pattern that matches it literally, anywhere. */
function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
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
      onWrite();
      const row = await announced(db, announce, (q) =>
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
 * A token and its account, by the token's hash: the authentication hot path, one indexed join.
 * Run as is on PostgreSQL, compiled once into a prepared statement on SQLite.
 */
export function tokenByHashQuery(db: Kysely<DatabaseSchema>, hash: string) {
  return db
    .selectFrom('tokens as t')
    .innerJoin('accounts as a', 'a.id', 't.account_id')
    .select([...joinedColumns('t', TOKEN_COLUMNS), ...JOINED_ACCOUNT_COLUMNS])
    .where('t.hash', '=', hash);
}

/** A row of tokenByHashQuery as the token and its account. */
export function asTokenWithAccount(r: Record<string, unknown>): { token: Token; account: Account } {
  return { token: asToken(joinedRow(r, 't')), account: asAccount(r) };
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
/** The name, in `secrets`, of the judge URL an API instance recorded (not a secret: a value every process agrees on). */
export const JUDGE_URL_NAME = 'judge_url';

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

const SESSION_COLUMNS = ['id', 'account_id', 'created_at', 'last_seen_at', 'expires_at', 'user_agent', 'ip', 'revoked_at'] as const;

/**
 * A dashboard session and its account, by the session's id: run as is on PostgreSQL, compiled
 * once into a prepared statement on SQLite (every dashboard page looks its session up).
 */
export function sessionByIdQuery(db: Kysely<DatabaseSchema>, id: string) {
  return db
    .selectFrom('sessions as s')
    .innerJoin('accounts as a', 'a.id', 's.account_id')
    .select([...joinedColumns('s', SESSION_COLUMNS), ...JOINED_ACCOUNT_COLUMNS])
    .where('s.id', '=', id);
}

/** A row of sessionByIdQuery as the session and its account. */
export function asSessionWithAccount(r: Record<string, unknown>): { session: Session; account: Account } {
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
export function kyselySessions(db: Kysely<DatabaseSchema>): SessionRepository {
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

export function kyselyAuthLinks(db: Kysely<DatabaseSchema>): AuthLinkRepository {
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

const WEBHOOK_SECRET_COLUMNS = ['account_id', 'secret', 'created_at', 'previous_secret', 'previous_until', 'older_secret', 'older_until'] as const;

function asWebhookSecret(row: Record<string, unknown>): WebhookSecret {
  const older = typeof row.older_secret === 'string' && typeof row.older_until === 'string' ? { older_secret: row.older_secret, older_until: row.older_until } : {};
  return {
    account_id: Number(row.account_id),
    secret: row.secret as string,
    created_at: row.created_at as string,
    previous_secret: (row.previous_secret as string | null) ?? null,
    previous_until: (row.previous_until as string | null) ?? null,
    ...older,
  };
}

type RotateOptions = { expected: string; older: { secret: string; until: string } | null };

function rotateWebhookSecret(db: Kysely<DatabaseSchema>): WebhookSecretRepository['rotate'] {
  function rotate(accountId: number, next: { secret: string; created_at: string }, previousUntil: string): Promise<WebhookSecret>;
  function rotate(accountId: number, next: { secret: string; created_at: string }, previousUntil: string, opts: RotateOptions): Promise<WebhookSecret | null>;
  function rotate(accountId: number, next: { secret: string; created_at: string }, previousUntil: string, opts?: RotateOptions): Promise<WebhookSecret | null> {
    return db.transaction().execute(async (trx) => {
      const current = await trx.selectFrom('webhook_secrets').select(['secret']).where('account_id', '=', accountId).executeTakeFirst();
      if (!current) {
        if (opts) return null;
        await trx.insertInto('webhook_secrets').values({ account_id: accountId, ...next }).execute();
      } else {
        let update = trx
          .updateTable('webhook_secrets')
          .set({
            secret: next.secret,
            created_at: next.created_at,
            previous_secret: current.secret,
            previous_until: previousUntil,
            older_secret: opts?.older?.secret ?? null,
            older_until: opts?.older?.until ?? null,
          })
          .where('account_id', '=', accountId);
        // The update itself checks the expected secret: after a concurrent rotation that committed
        // first (PostgreSQL re-reads the row once its lock is released) there is nothing to update.
        if (opts) update = update.where('secret', '=', opts.expected);
        const updated = await update.executeTakeFirst();
        if (Number(updated.numUpdatedRows) !== 1) return null;
      }
      return asWebhookSecret(await trx.selectFrom('webhook_secrets').select(WEBHOOK_SECRET_COLUMNS).where('account_id', '=', accountId).executeTakeFirstOrThrow());
    });
  }
  return rotate;
}

export function kyselyWebhookSecrets(db: Kysely<DatabaseSchema>): WebhookSecretRepository {
  const read = async (accountId: number) =>
    asWebhookSecret(await db.selectFrom('webhook_secrets').select(WEBHOOK_SECRET_COLUMNS).where('account_id', '=', accountId).executeTakeFirstOrThrow());
  return {
    async get(accountId, candidate) {
      await db
        .insertInto('webhook_secrets')
        .values({ account_id: accountId, ...candidate })
        .onConflict((oc) => oc.column('account_id').doNothing())
        .execute();
      return read(accountId);
    },
    rotate: rotateWebhookSecret(db),
  };
}
