import { Redis } from 'ioredis';

/**
 * How long a Redis command may go unanswered, on a connection that is still open, before this
 * instance judges Redis gone (stopped, or cut off without the socket closing) and counts by
 * itself. A Redis that went away is seen at once from its connection (refused, reset, closed):
 * this bound only tells a Redis that is slow from one that is silent. On a loaded machine (load
 * 10-20 on 2 cores) commands and this process's own event loop answer in seconds, and the former
 * 500 ms switched a live Redis's instance to limiting by itself (admitting more than the limit
 * between instances): a busy machine is not an outage. Requests wait for Redis meanwhile.
 */
export const REDIS_COMMAND_TIMEOUT_MS = 5_000;
/** How long a connection attempt may take (a refused one fails at once, whatever this is). */
export const REDIS_CONNECT_TIMEOUT_MS = 5_000;
/** Pause between reconnection attempts while Redis is away (ioredis keeps trying, forever). */
export const REDIS_RECONNECT_MS = 500;
/** While degraded, how often Redis is asked (PING) whether it answers again. */
export const REDIS_PROBE_MS = 1_000;

/** Where a request-path counter says that Redis went away and came back: one line each, never per request. */
export interface RedisStateLog {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

/** What the user of a RequestPathRedis does when Redis goes away and when it answers again. */
export interface RedisStateHooks {
  degraded(err: unknown): void;
  recovered(): void;
}

/**
 * A Redis connection for what every request waits on (rate limits, work in flight), and whether
 * it answers. While Redis is away a command fails at once (no offline queue) and its user counts
 * by itself. Redis is judged away by its connection (refused, reset, closed) at once, and by a
 * command only once it went unanswered for REDIS_COMMAND_TIMEOUT_MS: a slow Redis is waited for.
 * After a failure (a connection error, or a command its user reports with `degrade`)
 * it is `degraded` until the connection is ready again or a PING every REDIS_PROBE_MS answers.
 * Its user hears each change once through its hooks, never per request.
 */
export class RequestPathRedis {
  readonly client: Redis;
  #starting: Promise<void> | null;
  #probe: NodeJS.Timeout | null = null;
  #closed = false;

  constructor(
    url: string,
    private readonly hooks: RedisStateHooks,
  ) {
    this.client = new Redis(url, {
      // A command while disconnected fails at once (and the instance counts by itself) instead of
      // waiting in a queue for a Redis that may not come back.
      enableOfflineQueue: false,
      // The commands of one iteration of the event loop leave in one write.
      enableAutoPipelining: true,
      commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
      connectTimeout: REDIS_CONNECT_TIMEOUT_MS,
      maxRetriesPerRequest: 0,
      retryStrategy: () => REDIS_RECONNECT_MS,
      lazyConnect: false,
    });
    this.#starting = new Promise<void>((resolve) => {
      const done = () => {
        this.#starting = null;
        resolve();
      };
      this.client.once('ready', done);
      this.client.once('error', done);
      this.client.once('end', done);
    });
    this.client.on('error', (err: unknown) => this.degrade(err));
    this.client.on('close', () => this.degrade(new Error('connection closed')));
    this.client.on('ready', () => this.#recover());
  }

  /** Settles once the first connection attempt has succeeded or failed: until then a caller waits. */
  async started(): Promise<void> {
    if (this.#starting) await this.#starting;
  }

  /** True while its user counts by itself because Redis did not answer. */
  get degraded(): boolean {
    return this.#probe !== null;
  }

  /** Redis did not answer: its user counts by itself until it does (idempotent). */
  degrade(err: unknown): void {
    if (this.#closed || this.#probe !== null) return;
    this.#probe = setInterval(() => {
      if (this.client.status === 'ready') this.client.ping().then(() => this.#recover(), () => undefined);
    }, REDIS_PROBE_MS);
    this.#probe.unref();
    this.hooks.degraded(err);
  }

  #recover(): void {
    if (this.#closed || this.#probe === null) return;
    clearInterval(this.#probe);
    this.#probe = null;
    this.hooks.recovered();
  }

  /** Stops probing and hearing state changes; its user closes the connection. */
  close(): void {
    this.#closed = true;
    if (this.#probe) clearInterval(this.#probe);
  }
}
