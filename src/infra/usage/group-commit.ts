import type { UsageRecord, UsageRepository } from '../../domain/usage/repository.js';

/** A batch is written at once when it reaches this size, without waiting for the event loop's next iteration. */
export const GROUP_COMMIT_MAX_BATCH = 512;
/** Records kept in memory while the database cannot take them; beyond this the oldest are dropped. */
export const USAGE_PARKED_MAX_RECORDS = 200_000;
/** How often kept records are offered to the database again. */
export const USAGE_RETRY_MS = 500;
/** Kept records are written back in transactions of at most this many. */
export const USAGE_PARKED_WRITE_CHUNK = 20_000;

/**
 * Called once a record's batch is in the store or, when the store failed, kept to be written
 * later: a record is never refused, so there is no error to pass.
 */
export type RecordedCallback = () => void;

/** Where the recorder says that an outage began and ended (pino's shape; the app's logger). */
export interface UsageLog {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

const SILENT: UsageLog = { warn() {}, info() {}, error() {} };

/** SQLite's result codes for a value or row it will never take (not a busy or full database). */
const SQLITE_REFUSALS = ['SQLITE_CONSTRAINT', 'SQLITE_MISMATCH', 'SQLITE_TOOBIG', 'SQLITE_RANGE'];

/**
 * Whether the database refused the records themselves (a constraint, a bad value: the account
 * was deleted meanwhile), so writing them again can never succeed. Anything else, known or not,
 * counts as the database being unavailable and the records are kept.
 */
function isRefusal(err: unknown): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) {
    if (e instanceof TypeError || e instanceof RangeError) return true;
    const code = (e as { code?: unknown }).code;
    if (typeof code !== 'string') continue;
    // PostgreSQL SQLSTATE classes 22 (data exception) and 23 (integrity constraint violation).
    if (code.length === 5 && (code.startsWith('22') || code.startsWith('23'))) return true;
    if (SQLITE_REFUSALS.some((c) => code.startsWith(c))) return true;
  }
  return false;
}

/** Records a write could not store because the database is unavailable, and why. */
interface Unwritten {
  rest: readonly UsageRecord[];
  err: unknown;
}

/**
 * Group commit for usage records: every request's record joins the open batch, the batch is
 * written in one transaction on the next iteration of the event loop (or, while a write is in flight,
 * as soon as it ends), and each request's callback (or promise) is answered only then. A response waits for its record, so a response that was
 * sent is in the store even after kill -9, while the database sees one transaction per
 * iteration of the event loop, not per request.
 *
 * When the store cannot take a batch (PostgreSQL is down), its records are kept in memory, up to
 * USAGE_PARKED_MAX_RECORDS, the responses go out, and the records are written when the database
 * is back, or when the app closes. Only those kept records can be lost, to a crash during the
 * outage. The outage is logged when it begins and when it ends, not once per request.
 */
export class GroupCommitRecorder {
  private records: UsageRecord[] = [];
  private callbacks: RecordedCallback[] = [];
  private scheduled = false;
  private readonly flushSoon = () => this.flush();
  /** The write loop while it runs: one write at a time, each taking everything that is waiting. */
  private writing: Promise<void> | null = null;
  /** Records of failed writes, oldest first, waiting for the database. */
  private parked: UsageRecord[] = [];
  /** Parked records dropped because the queue was full, in this outage. */
  private dropped = 0;
  private retryTimer: NodeJS.Timeout | null = null;
  private retryDue = false;

  constructor(
    private readonly usage: UsageRepository,
    private readonly log: UsageLog = SILENT,
    /** Told of every batch once it is in the store (kept records too, when they get there). */
    private readonly onWritten?: (records: readonly UsageRecord[]) => void,
  ) {}

  /** Records waiting in memory for the database (0 unless it is, or was just, unreachable). */
  get pending(): number {
    return this.parked.length;
  }

  /** Settles once the batch holding the record is in the store, or kept in memory for it. */
  record(record: UsageRecord): Promise<void> {
    return new Promise<void>((resolve) => {
      this.records.push(record);
      this.callbacks.push(resolve);
      if (this.records.length >= GROUP_COMMIT_MAX_BATCH) this.flush();
      else if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(this.flushSoon);
      }
    });
  }

  /**
   * Starts the write loop unless it runs. While a write is in flight, records keep joining the
   * next batch, which is written as soon as that write ends: a slow commit (PostgreSQL's fsync)
   * makes batches larger, not a queue of small transactions longer.
   */
  private flush(): void {
    this.scheduled = false;
    if (this.writing || (this.records.length === 0 && !this.retryDue)) return;
    this.writing = this.writeLoop().finally(() => {
      this.writing = null;
      // Records added between the loop's last look and now.
      if (this.records.length > 0 || this.retryDue) this.flush();
    });
  }

  private async writeLoop(): Promise<void> {
    while (this.records.length > 0 || this.retryDue) {
      if (this.retryDue) {
        this.retryDue = false;
        await this.writeParked();
        continue;
      }
      const records = this.records;
      const callbacks = this.callbacks;
      this.records = [];
      this.callbacks = [];
      const unwritten = await this.write(records);
      if (unwritten) this.park(unwritten.rest, unwritten.err);
      // The database takes writes again: what was kept goes in at once.
      else if (this.parked.length > 0) this.retryDue = true;
      for (const done of callbacks) done();
    }
  }

  /**
   * Writes records in one transaction. When the database refuses the batch, it is split in
   * halves, in order, until the records it refuses are alone; those are dropped (and logged): one
   * bad record must not hold every later one in memory, retried forever, and finding it takes a
   * few writes, not one per record. Returns what is left to write when the database is
   * unavailable (the records from the first one not written on), or null.
   */
  private async write(records: readonly UsageRecord[]): Promise<Unwritten | null> {
    try {
      await this.usage.record(records);
    } catch (err) {
      if (!isRefusal(err)) return { rest: records, err };
      if (records.length === 1) {
        this.refused(records[0]!, err);
        return null;
      }
      const half = Math.ceil(records.length / 2);
      const first = await this.write(records.slice(0, half));
      if (first) return { rest: [...first.rest, ...records.slice(half)], err: first.err };
      return this.write(records.slice(half));
    }
    // Outside the write's try: a callback that throws must not make written records look
    // unwritten (they would be written, and counted, twice), nor stop the write loop.
    try {
      this.onWritten?.(records);
    } catch (err) {
      this.log.error({ err }, 'usage records were written; telling the rate limiter failed');
    }
    return null;
  }

  private refused(record: UsageRecord, err: unknown): void {
    this.log.error({ err, record }, 'the database refused a usage record; it is dropped');
  }

  private park(records: readonly UsageRecord[], err: unknown): void {
    const first = this.parked.length === 0;
    for (const r of records) this.parked.push(r);
    const over = this.parked.length - USAGE_PARKED_MAX_RECORDS;
    if (over > 0) {
      this.parked.splice(0, over);
      this.dropped += over;
    }
    if (first) {
      this.log.warn(
        { err, kept: this.parked.length },
        `usage records could not be written; they are kept in memory (at most ${USAGE_PARKED_MAX_RECORDS}) and written when the database is back`,
      );
    }
    this.scheduleRetry();
  }

  private scheduleRetry(): void {
    if (this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.retryDue = true;
      this.flush();
    }, USAGE_RETRY_MS);
    this.retryTimer.unref();
  }

  /** Writes kept records in chunks; true when none are left. */
  private async writeParked(): Promise<boolean> {
    let written = 0;
    while (this.parked.length > 0) {
      const chunk = this.parked.slice(0, USAGE_PARKED_WRITE_CHUNK);
      const unwritten = await this.write(chunk);
      if (unwritten) {
        const done = chunk.length - unwritten.rest.length;
        this.parked.splice(0, done);
        written += done;
        if (written > 0) this.log.info({ written, kept: this.parked.length }, 'some kept usage records were written; the rest wait');
        this.scheduleRetry();
        return false;
      }
      this.parked.splice(0, chunk.length);
      written += chunk.length;
    }
    if (written > 0) {
      const dropped = this.dropped;
      this.dropped = 0;
      if (dropped > 0) this.log.error({ written, dropped }, 'the database is back; usage records kept meanwhile were written, but the oldest were dropped when the queue was full');
      else this.log.info({ written }, 'the database is back; usage records kept meanwhile were written');
    }
    return true;
  }

  /** Writes what is pending, kept records included; called on shutdown before the store closes. */
  async drain(): Promise<void> {
    this.flush();
    while (this.writing) await this.writing;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    this.retryDue = false;
    if (this.parked.length === 0) return;
    const done = await this.writeParked();
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    if (!done) this.log.error({ lost: this.parked.length + this.dropped }, 'closing while the database cannot be reached: usage records kept in memory are lost');
  }
}
