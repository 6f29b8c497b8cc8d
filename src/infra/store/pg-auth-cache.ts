import { sql, type Kysely } from 'kysely';
import { LRUCache } from 'lru-cache';
import pg from 'pg';
import { inNextCheckPhase } from '../../lib/check-phase.js';
import { PG_CONNECT_TIMEOUT_MS } from './pg-availability.js';

/** The channel every write that revokes a token or changes an account notifies. */
export const AUTH_CHANNEL = 'netdiag_auth';
/** How soon a lost LISTEN connection is opened again. */
export const PG_LISTEN_RETRY_MS = 500;
/** A fence round trip that takes longer than this counts as a lost LISTEN connection. */
export const PG_FENCE_TIMEOUT_MS = 1_000;

/**
 * Authentication results cached in memory on PostgreSQL, dropped whenever any instance (or the
 * CLI) revokes a token or changes an account. Those writes NOTIFY in their own transaction; a
 * dedicated connection LISTENs, and on a notification, or on losing that connection, the cache
 * is dropped. While it is not listening nothing is served from the cache.
 *
 * A notification travels on its own, so a request could arrive before the notification of a
 * revocation that committed before the request was sent. A cached answer therefore waits for a
 * fence: one round trip on the LISTEN connection, sent after the request was read and shared by
 * every request read in the same iteration of the event loop and the next. PostgreSQL delivers the
 * notifications a listening session has pending before it answers its next query, so once the
 * fence is answered every revocation committed before the request was sent has dropped the cache.
 */
export class ListenedCache<V extends object> {
  private readonly entries: LRUCache<string, V>;
  /** Bumped by every drop: a lookup that spans one does not fill the cache. */
  private generation = 0;
  private client: pg.Client | null = null;
  private listening = false;
  private connecting = false;
  private closed = false;
  private retry: NodeJS.Timeout | null = null;
  private fencing: Promise<boolean> | null = null;
  private lastFence: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly config: pg.ClientConfig,
    private readonly channel: string,
    maxEntries: number,
  ) {
    this.entries = new LRUCache({ max: maxEntries });
  }

  /** The cached value once the fence allows it; otherwise `load`'s, cached when nothing changed meanwhile. */
  find(key: string, load: () => Promise<V | undefined>): Promise<V | undefined> {
    this.listen();
    if (this.listening && this.entries.has(key)) {
      return this.fence().then((fresh) => {
        if (fresh && this.listening) {
          const hit = this.entries.get(key);
          if (hit !== undefined) return hit;
        }
        return this.load(key, load);
      });
    }
    return this.load(key, load);
  }

  /** NOTIFY the channel within `db` (a transaction: delivered when it commits). */
  async notify<DB>(db: Kysely<DB>): Promise<void> {
    await sql`select pg_notify(${this.channel}, '')`.execute(db);
  }

  /**
   * Runs `work`, a write that changes what is cached, with a NOTIFY in its own transaction: the
   * announcement goes out exactly when the change commits, to every instance (this one too).
   */
  write<DB, T>(db: Kysely<DB>, work: (q: Kysely<DB>) => Promise<T>): Promise<T> {
    return db.transaction().execute(async (trx) => {
      const result = await work(trx);
      await this.notify(trx);
      return result;
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    const client = this.client;
    this.lost();
    await client?.end().catch(() => {});
  }

  private async load(key: string, load: () => Promise<V | undefined>): Promise<V | undefined> {
    const generation = this.generation;
    const value = await load();
    // Unknown keys are not cached: guessing must not grow memory.
    if (value !== undefined && this.listening && generation === this.generation) {
      this.entries.set(key, value);
    }
    return value;
  }

  private drop(): void {
    this.generation++;
    this.entries.clear();
  }

  /** true once a round trip on the LISTEN connection, sent after this call, is answered. */
  private fence(): Promise<boolean> {
    if (!this.fencing) {
      this.fencing = new Promise<boolean>((resolve) => {
        // Sent in the next iteration's check phase: after every request read in this
        // iteration's poll phase and the next one's.
        inNextCheckPhase(() => {
          this.fencing = null;
          const client = this.client;
          if (!client || !this.listening) return resolve(false);
          // One query at a time on the connection (node-postgres deprecates queueing them): a
          // fence sent once the previous one is answered is still sent after its requests were read.
          // An empty query: the cheapest round trip (nothing to parse, plan or describe on either
          // side), and like any other it ends with ReadyForQuery, before which PostgreSQL sends the
          // notifications the session has received.
          const round = this.lastFence.then(() => client.query(''));
          this.lastFence = round.catch(() => {});
          round.then(
            () => resolve(true),
            () => {
              if (this.client === client) this.lost();
              resolve(false);
            },
          );
        });
      });
    }
    return this.fencing;
  }

  private listen(): void {
    if (this.listening || this.connecting || this.closed || this.retry) return;
    this.connecting = true;
    const client = new pg.Client({
      connectionTimeoutMillis: PG_CONNECT_TIMEOUT_MS,
      query_timeout: PG_FENCE_TIMEOUT_MS,
      keepAlive: true,
      // How the LISTEN connection shows in pg_stat_activity.
      application_name: this.channel,
      ...this.config,
    });
    this.client = client;
    const onLost = () => {
      if (this.client === client) this.lost();
    };
    client.on('error', onLost);
    client.on('end', onLost);
    client.on('notification', (msg) => {
      if (msg.channel === this.channel) this.drop();
    });
    client
      .connect()
      .then(() => client.query(`listen ${pg.escapeIdentifier(this.channel)}`))
      .then(
        () => {
          this.connecting = false;
          if (this.client === client && !this.closed) {
            // Whatever was written before LISTEN took effect was not announced to us.
            this.drop();
            this.listening = true;
          }
        },
        () => {
          this.connecting = false;
          onLost();
        },
      );
  }

  /** The LISTEN connection is gone: nothing cached can be trusted until it is back. */
  private lost(): void {
    const client = this.client;
    this.client = null;
    this.listening = false;
    this.connecting = false;
    this.drop();
    if (client) {
      client.removeAllListeners('notification');
      client.end().catch(() => {});
    }
    if (!this.closed && !this.retry) {
      this.retry = setTimeout(() => {
        this.retry = null;
        this.listen();
      }, PG_LISTEN_RETRY_MS);
      this.retry.unref();
    }
  }
}
