import type { PostgresPool, PostgresPoolClient } from 'kysely';
import pg from 'pg';
import { DatabaseSlowError, DatabaseUnavailableError } from '../../errors.js';

/**
 * What keeps a PostgreSQL outage from ending the process or hanging requests: every pool and
 * client error handled, a short connect timeout, and a circuit breaker that fails fast for a
 * moment after a connection failure and then lets one probe through.
 */

/**
 * How long opening a connection may take before the attempt fails. A server that is not there
 * refuses or resets at once, whatever this is: it only bounds a server that is slow to start a
 * backend (a fork and its authentication), which on a loaded machine (load 10-20 on 2 cores)
 * took over the former 1 s and answered 503s, lost job leases and a false /readyz 503 while
 * PostgreSQL was up.
 */
export const PG_CONNECT_TIMEOUT_MS = 5_000;
/**
 * A timeout (connect or statement) says the database is slow, not that it is gone: that call
 * fails (503), but the breaker opens on timeouts only once nothing has succeeded for this long
 * (a server stopped without closing its sockets, or a network split). Refused, reset and
 * shutdown answers open it at once.
 */
export const PG_UNRESPONSIVE_MS = 15_000;
/**
 * A statement that has had no answer for this long fails (and counts as the database being
 * unreachable): a server that accepts connections and then stalls, or a network split in the
 * middle of a query, must not hold every response that waits for its usage write. Generous:
 * the slowest legitimate query is a 365-day usage export.
 */
export const PG_QUERY_TIMEOUT_MS = 10_000;
/** After a connection failure, calls fail at once for this long; then one probe is let through. */
export const PG_BREAKER_OPEN_MS = 500;

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

/**
 * node-postgres' words for a connect or a statement that timed out: a slow server, maybe not a
 * gone one. pg-pool says "timeout exceeded when trying to connect" both when no client became
 * free and when the new connection it opened for the caller took too long (the caller waits in
 * its queue meanwhile): the former 1 s of it was the false /readyz 503 of a loaded machine.
 */
const TIMED_OUT_MESSAGE = /^(Connection terminated due to connection timeout|Query read timeout|timeout exceeded when trying to connect)/;

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

/** Whether an error is a timeout (the server may be slow rather than gone): see PG_UNRESPONSIVE_MS. */
export function isDatabaseTimeout(err: unknown): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) {
    if (TIMED_OUT_MESSAGE.test(e.message)) return true;
  }
  return false;
}

/**
 * Closed (calls go through), open (calls fail at once), then half-open (one probe goes through).
 * A failure opens it; a timeout only once nothing succeeded for `unresponsiveMs`.
 */
export class CircuitBreaker {
  private down = false;
  private openUntil = 0;
  private probing = false;
  private lastSuccess: number;
  /** Told when the database becomes unreachable (with the error) and when it is back. */
  onChange: (up: boolean, err?: unknown) => void = () => {};

  constructor(
    private readonly openMs = PG_BREAKER_OPEN_MS,
    private readonly now: () => number = Date.now,
    private readonly unresponsiveMs = PG_UNRESPONSIVE_MS,
  ) {
    this.lastSuccess = now();
  }

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

  /**
   * A connect or statement timed out: true when that opened the breaker (nothing succeeded for
   * `unresponsiveMs`, or it was open already), false when the database is taken as slow only.
   */
  timedOut(err: unknown): boolean {
    if (this.down || this.now() - this.lastSuccess >= this.unresponsiveMs) {
      this.failed(err);
      return true;
    }
    this.probing = false;
    return false;
  }

  succeeded(): void {
    this.lastSuccess = this.now();
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
    if (isDatabaseTimeout(err)) breaker.timedOut(err);
    else if (isDatabaseUnreachable(err)) breaker.failed(err);
  };
  // What a connect or statement that failed at the connection level throws: slow (the breaker
  // stays closed) or unavailable.
  const unavailable = (err: unknown): DatabaseUnavailableError => {
    if (isDatabaseTimeout(err)) return breaker.timedOut(err) ? new DatabaseUnavailableError(err) : new DatabaseSlowError(err);
    breaker.failed(err);
    return new DatabaseUnavailableError(err);
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
      return result.then(
        (answer: unknown) => {
          breaker.succeeded();
          return answer;
        },
        (err: unknown) => {
          if (!isDatabaseUnreachable(err)) throw err;
          broken.set(client, err as Error);
          throw unavailable(err);
        },
      );
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
        // A wait for a free client or a new connection that timed out says the database is slow
        // (or the pool busy): the breaker opens only once nothing succeeded for PG_UNRESPONSIVE_MS.
        throw unavailable(err);
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
