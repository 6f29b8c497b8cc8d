import type { PostgresPool, PostgresPoolClient } from 'kysely';
import pg from 'pg';
import { DatabaseUnavailableError } from '../../errors.js';

/**
 * What keeps a PostgreSQL outage from ending the process or hanging requests: every pool and
 * client error handled, a short connect timeout, and a circuit breaker that fails fast for a
 * moment after a connection failure and then lets one probe through.
 */

/** How long opening a connection may take before the attempt counts as a failure. */
export const PG_CONNECT_TIMEOUT_MS = 1_000;
/**
 * A statement that has had no answer for this long fails (and counts as the database being
 * unreachable): a server that accepts connections and then stalls, or a network split in the
 * middle of a query, must not hold every response that waits for its usage write. Generous:
 * the slowest legitimate query is a 365-day usage export.
 */
export const PG_QUERY_TIMEOUT_MS = 10_000;
/** After a connection failure, calls fail at once for this long; then one probe is let through. */
export const PG_BREAKER_OPEN_MS = 500;
/** The Retry-After (seconds) of an answer refused because the database cannot be reached. */
export const DATABASE_RETRY_AFTER_S = 1;

/** Socket-level failures: the server is not there (or stopped talking). */
const UNREACHABLE_SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'NETDIAG_DATABASE_UNAVAILABLE',
]);
/** SQLSTATEs of a server shutting down, starting up or full; class 08 (connection exception) by prefix. */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300']);
/** node-postgres and pg-pool say these in words only. */
const UNREACHABLE_MESSAGE =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error and is not queryable|Connection terminated due to connection timeout|Query read timeout)/;

/** pg-pool's words when no client became free within the connect timeout. */
const POOL_BUSY_MESSAGE = 'timeout exceeded when trying to connect';

/** Whether an error means "the database cannot be reached now" rather than "this query is wrong". */
export function isDatabaseUnreachable(err: unknown): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && (UNREACHABLE_SOCKET_CODES.has(code) || UNAVAILABLE_SQLSTATES.has(code) || code.startsWith('08'))) return true;
    if (UNREACHABLE_MESSAGE.test(e.message)) return true;
    if (e instanceof AggregateError && e.errors.some(isDatabaseUnreachable)) return true;
  }
  return false;
}

/** Closed (calls go through), open (calls fail at once), then half-open (one probe goes through). */
export class CircuitBreaker {
  private down = false;
  private openUntil = 0;
  private probing = false;
  /** Told when the database becomes unreachable (with the error) and when it is back. */
  onChange: (up: boolean, err?: unknown) => void = () => {};

  constructor(
    private readonly openMs = PG_BREAKER_OPEN_MS,
    private readonly now: () => number = Date.now,
  ) {}

  get available(): boolean {
    return !this.down;
  }

  /** Throws DatabaseUnavailableError when the call must fail fast; otherwise the call may go ahead. */
  admit(): void {
    if (!this.down) return;
    if (this.probing || this.now() < this.openUntil) throw new DatabaseUnavailableError();
    this.probing = true;
  }

  failed(err: unknown): void {
    this.probing = false;
    this.openUntil = this.now() + this.openMs;
    if (!this.down) {
      this.down = true;
      this.onChange(false, err);
    }
  }

  succeeded(): void {
    this.probing = false;
    if (this.down) {
      this.down = false;
      this.onChange(true);
    }
  }
}

/**
 * A pg.Pool behind the breaker, in the shape Kysely's PostgresDialect takes. Every client gets
 * an 'error' listener for its whole life: pg-pool listens only while a client is idle, and an
 * error between two statements of a checked-out client would otherwise end the process.
 */
export function guardedPool(config: pg.PoolConfig, breaker: CircuitBreaker): { pool: PostgresPool; raw: pg.Pool } {
  const raw = new pg.Pool({ connectionTimeoutMillis: PG_CONNECT_TIMEOUT_MS, query_timeout: PG_QUERY_TIMEOUT_MS, keepAlive: true, ...config });
  const onClientError = (err: unknown) => {
    if (isDatabaseUnreachable(err)) breaker.failed(err);
  };
  // An idle client that dies (server restart) is dropped by the pool; it does not open the
  // breaker by itself: the next connect says whether the server is really gone.
  raw.on('error', () => {});
  // A client whose statement failed or timed out at the connection level is not given back to
  // the pool when released: it is dropped (a timed-out statement may still be running on it).
  const broken = new WeakMap<pg.PoolClient, Error>();
  raw.on('connect', (client) => {
    client.on('error', onClientError);
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    // Kysely calls query(sql, params) and gets a promise: a connection-level failure of a
    // statement opens the breaker, like a failed connect.
    (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
      const result = query(...args);
      if (!(result instanceof Promise)) return result;
      return result.catch((err: unknown) => {
        if (!isDatabaseUnreachable(err)) throw err;
        broken.set(client, err as Error);
        breaker.failed(err);
        throw new DatabaseUnavailableError(err);
      });
    };
  });
  const pool: PostgresPool = {
    async connect(): Promise<PostgresPoolClient> {
      breaker.admit();
      let client: pg.PoolClient;
      try {
        client = await raw.connect();
      } catch (err) {
        if (!isDatabaseUnreachable(err)) {
          breaker.succeeded();
          throw err;
        }
        // A wait for a free client that timed out says the pool is busy, not that the server is gone.
        if (err instanceof Error && err.message === POOL_BUSY_MESSAGE) breaker.succeeded();
        else breaker.failed(err);
        throw new DatabaseUnavailableError(err);
      }
      breaker.succeeded();
      const release = client.release;
      client.release = (err?: Error | boolean) => release(err ?? broken.get(client));
      return client as unknown as PostgresPoolClient;
    },
    end: () => raw.end(),
  };
  return { pool, raw };
}
