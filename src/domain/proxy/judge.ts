import { randomBytes } from 'node:crypto';
import type { JudgeRepository, NonceUse } from './judge-repository.js';
import { JUDGE_NONCE_TTL_MS, JUDGE_PURGE_GRACE_MS, JUDGE_PURGE_INTERVAL_MS, JUDGE_REVOKE_BATCH_MAX, JUDGE_SECRET_BYTES, SPEED_DOWNLOAD_BYTES } from './defaults.js';
import { grants, mintNonce, readNonce, signEcho, signUpload, useBits, type NonceFields } from './judge-signing.js';
import type { JudgeEcho, SignedJudgeEcho } from './types.js';

type SpentNonce = { id: string; expiresAt: number };

/** A nonce this judge issued: its fields, and the uses this judge itself spent in the database. */
interface OwnNonce extends NonceFields {
  spentHere: number;
}

/** Revocations waiting for the write under way to finish; `written` settles when theirs is done. */
interface RevocationBatch {
  nonces: SpentNonce[];
  written: Promise<void>;
  resolve: () => void;
  reject: (err: unknown) => void;
}

function revocationBatch(): RevocationBatch {
  let resolve!: () => void;
  let reject!: (err: unknown) => void;
  const written = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // Every caller awaits it; this only keeps a failed write from being an unhandled rejection meanwhile.
  written.catch(() => undefined);
  return { nonces: [], written, resolve, reject };
}

/** Every use a nonce can grant: a check that measures speed needs all three. */
export const ALL_NONCE_USES: readonly NonceUse[] = ['echo', 'download', 'upload'];

/**
 * The judge's side: it echoes the peer address and the headers that reached it, and serves the
 * speed-test payloads, but only to requests that carry a nonce we issued for a check that is
 * still running, and each of a nonce's uses (one echo, one download, one upload) only once.
 * Without one it answers nothing, so it is no open echo service, and a proxy that replays the
 * URL it was sent to gets nothing more out of it.
 *
 * Nonces carry their own expiry and uses under the judge's tag, so one that we did not make is
 * refused without a database round trip; which uses are spent is in the database (the ledger),
 * so every instance sharing it (behind one judge URL) agrees, and of two instances asked for the
 * same use at once exactly one says yes. The echo is signed with the judge's key, so the checker
 * can tell it from one a proxy made up.
 */
export class Judge {
  /** One shared buffer: the download is the same bytes for every check. */
  readonly downloadPayload: Buffer;
  readonly #ledger: JudgeRepository;
  readonly #secret: string | undefined;
  readonly #ttlMs: number;
  readonly #now: () => number;
  #key: Promise<Buffer> | null = null;
  #purgedAt: number;
  /**
   * Nonces issued and not revoked yet, with their fields (a check that died leaves one until it
   * expires). In issue order, which is expiry order. The key is the whole nonce, tag included, so
   * a nonce found here is one we made: its tag need not be computed again to admit or revoke it.
   */
  readonly #outstanding = new Map<string, OwnNonce>();
  /**
   * Nonces this judge revoked, until they expire: a proxy that replays one (it saw the URL) is
   * refused from memory, so replays cost the database nothing. Revocation order, which is near
   * enough expiry order for the sweep in `issue` to keep it bounded by the nonce TTL.
   */
  readonly #retired = new Map<string, number>();
  /** A revocation write is under way; revocations meanwhile gather in `#nextRevocations`. */
  #revoking = false;
  #nextRevocations: RevocationBatch | null = null;

  constructor(
    opts: {
      /** Spent uses and the stored secret: the database; unset, this process's memory only. */
      ledger?: JudgeRepository;
      /** NETDIAG_JUDGE_SECRET; unset, the secret stored in the ledger (made by the first instance). */
      secret?: string | undefined;
      ttlMs?: number;
      now?: () => number;
      downloadBytes?: number;
    } = {},
  ) {
    this.#ledger = opts.ledger ?? new MemoryJudgeLedger();
    this.#secret = opts.secret;
    this.#ttlMs = opts.ttlMs ?? JUDGE_NONCE_TTL_MS;
    this.#now = opts.now ?? Date.now;
    this.#purgedAt = this.#now();
    // Random bytes, so no compressing proxy can make the speed test look faster than it is.
    this.downloadPayload = randomBytes(opts.downloadBytes ?? SPEED_DOWNLOAD_BYTES);
  }

  /** The signing key, read (or, by the first instance, made) once; a failed read is tried again next time. */
  key(): Promise<Buffer> {
    this.#key ??= (async () => {
      const secret = this.#secret ?? (await this.#ledger.secret(randomBytes(JUDGE_SECRET_BYTES).toString('base64url')));
      return Buffer.from(secret, 'utf8');
    })().catch((err: unknown) => {
      this.#key = null;
      throw err;
    });
    return this.#key;
  }

  /** A fresh nonce for one check, granting `uses` once each; revoke it when the check ends. */
  async issue(uses: readonly NonceUse[] = ALL_NONCE_USES): Promise<string> {
    const key = await this.key();
    const now = this.#now();
    const expiresAt = now + this.#ttlMs;
    const id = randomBytes(16);
    const nonce = mintNonce(key, uses, expiresAt, id);
    // Expired ones are at the front (issue order), so this stops at the first live one.
    for (const [n, fields] of this.#outstanding) {
      if (fields.expiresAt > now) break;
      this.#outstanding.delete(n);
    }
    for (const [n, expiresAt] of this.#retired) {
      if (expiresAt > now) break;
      this.#retired.delete(n);
    }
    this.#outstanding.set(nonce, { id: id.toString('hex'), expiresAt, uses: useBits(uses), spentHere: 0 });
    return nonce;
  }

  /** Our nonce's fields: from memory when this instance issued it, else from its tag (null: not ours). */
  #fields(key: Buffer, nonce: string): NonceFields | null {
    return this.#outstanding.get(nonce) ?? readNonce(key, nonce);
  }

  /**
   * The check ended: whatever uses of its nonces are left are spent, on every instance; resolves
   * once that is written. One write at a time: checks of a bulk end together, and those that end
   * while a write is under way share the next one (a group commit) instead of one write each.
   */
  async revoke(...nonces: string[]): Promise<void> {
    const key = await this.key();
    const spent: SpentNonce[] = [];
    for (const nonce of nonces) {
      const own = this.#outstanding.get(nonce);
      this.#outstanding.delete(nonce);
      if (own) this.#retired.set(nonce, own.expiresAt);
      // Every use it grants was spent through this judge: the database holds them all already.
      if (own && (own.spentHere & own.uses) === own.uses) continue;
      const fields = own ?? readNonce(key, nonce);
      if (fields) spent.push({ id: fields.id, expiresAt: fields.expiresAt });
    }
    if (spent.length === 0) return;
    if (this.#revoking) {
      this.#nextRevocations ??= revocationBatch();
      this.#nextRevocations.nonces.push(...spent);
      return this.#nextRevocations.written;
    }
    this.#revoking = true;
    try {
      await this.#spendAll(spent);
    } finally {
      this.#writeNextRevocations();
    }
  }

  /** The revocations that gathered during the last write, in one write of their own. */
  #writeNextRevocations(): void {
    const batch = this.#nextRevocations;
    this.#nextRevocations = null;
    this.#revoking = batch !== null;
    if (batch === null) return;
    this.#spendAll(batch.nonces).then(batch.resolve, batch.reject).finally(() => this.#writeNextRevocations());
  }

  #spendAll(nonces: readonly SpentNonce[]): Promise<void> {
    const writes: Array<Promise<void>> = [];
    for (let i = 0; i < nonces.length; i += JUDGE_REVOKE_BATCH_MAX) writes.push(this.#ledger.spendAll(nonces.slice(i, i + JUDGE_REVOKE_BATCH_MAX)));
    return Promise.all(writes).then(() => undefined);
  }

  /**
   * True once for each use a live nonce of ours grants; false for anything else (made up,
   * expired, revoked, not granted, or that use already spent on any instance).
   */
  async admit(nonce: string, use: NonceUse): Promise<boolean> {
    // Replays of what this judge issued and knows to be spent are refused without a write.
    const issued = this.#outstanding.get(nonce);
    if (this.#retired.has(nonce) || (issued !== undefined && (issued.spentHere & useBits([use])) !== 0)) return false;
    const fields = this.#fields(await this.key(), nonce);
    const now = this.#now();
    if (!fields || !grants(fields, use) || fields.expiresAt <= now) return false;
    if (now - this.#purgedAt >= JUDGE_PURGE_INTERVAL_MS) {
      this.#purgedAt = now;
      // Rows of expired nonces only cost space: a purge that fails is simply tried again later.
      this.#ledger.purge(now - JUDGE_PURGE_GRACE_MS).catch(() => undefined);
    }
    const spent = await this.#ledger.spend(fields.id, use, fields.expiresAt);
    if (spent && issued) issued.spentHere |= useBits([use]);
    return spent;
  }

  /** Nonces this judge issued that no check has revoked yet (tests). */
  get active(): number {
    return this.#outstanding.size;
  }

  /** The signed echo body for an admitted request. */
  async echo(nonce: string, remoteAddress: string, method: string, rawHeaders: readonly string[]): Promise<SignedJudgeEcho> {
    const headers: Array<[string, string]> = [];
    for (let i = 0; i + 1 < rawHeaders.length; i += 2) headers.push([rawHeaders[i]!, rawHeaders[i + 1]!]);
    const echo: JudgeEcho = { nonce, remote_address: normalizeAddress(remoteAddress), method, headers };
    return { ...echo, signature: signEcho(await this.key(), echo) };
  }

  /** The signed receipt for an admitted upload of `bytes` bytes. */
  async uploadReceipt(nonce: string, bytes: number): Promise<{ bytes: number; signature: string }> {
    return { bytes, signature: signUpload(await this.key(), nonce, bytes) };
  }
}

/**
 * The ledger of a judge whose nonces only this process issues and serves (tests, and a checker
 * built without a store). Bounded by the purge like the database.
 */
export class MemoryJudgeLedger implements JudgeRepository {
  readonly #spent = new Map<string, number>();
  #secret: string | null = null;
  #url: string | null = null;

  async recordUrl(url: string): Promise<void> {
    this.#url = url;
  }

  async recordedUrl(): Promise<string | null> {
    return this.#url;
  }

  async secret(candidate: string): Promise<string> {
    this.#secret ??= candidate;
    return this.#secret;
  }

  async spend(id: string, use: NonceUse, expiresAt: number): Promise<boolean> {
    const name = `${id}/${use}`;
    if (this.#spent.has(name)) return false;
    this.#spent.set(name, expiresAt);
    return true;
  }

  async spendAll(nonces: ReadonlyArray<{ id: string; expiresAt: number }>): Promise<void> {
    for (const { id, expiresAt } of nonces) for (const use of ALL_NONCE_USES) await this.spend(id, use, expiresAt);
  }

  async purge(before: number): Promise<number> {
    let removed = 0;
    for (const [name, expiresAt] of this.#spent) {
      if (expiresAt <= before) {
        this.#spent.delete(name);
        removed++;
      }
    }
    return removed;
  }
}

/** `::ffff:1.2.3.4` → `1.2.3.4`: sockets on a dual-stack listener spell IPv4 peers that way. */
export function normalizeAddress(address: string): string {
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return m ? m[1]! : address.toLowerCase();
}
