import { randomBytes } from 'node:crypto';
import { JUDGE_MAX_NONCES, JUDGE_NONCE_TTL_MS, SPEED_DOWNLOAD_BYTES } from './defaults.js';
import type { JudgeEcho } from './types.js';

/**
 * The judge's side: it echoes the peer address and the headers that reached it, and serves the
 * speed-test payloads, but only to requests that carry a nonce issued for a check that is still
 * running. Without one it answers nothing, so it is no open echo service for anyone else.
 *
 * Nonces are in memory: the judge URL must lead back to this very process (several instances
 * behind one judge URL would each refuse the others' nonces).
 */
export class Judge {
  readonly #nonces = new Map<string, number>();
  readonly #ttlMs: number;
  readonly #now: () => number;
  /** One shared buffer: the download is the same bytes for every check. */
  readonly downloadPayload: Buffer;

  constructor(opts: { ttlMs?: number; now?: () => number; downloadBytes?: number } = {}) {
    this.#ttlMs = opts.ttlMs ?? JUDGE_NONCE_TTL_MS;
    this.#now = opts.now ?? Date.now;
    // Random bytes, so no compressing proxy can make the speed test look faster than it is.
    this.downloadPayload = randomBytes(opts.downloadBytes ?? SPEED_DOWNLOAD_BYTES);
  }

  /** A fresh nonce for one check; revoke it when the check ends. */
  issue(): string {
    this.#sweep();
    const nonce = randomBytes(16).toString('hex');
    this.#nonces.set(nonce, this.#now() + this.#ttlMs);
    return nonce;
  }

  revoke(nonce: string): void {
    this.#nonces.delete(nonce);
  }

  /** True while the nonce was issued, not revoked and not expired. */
  accepts(nonce: string): boolean {
    if (!/^[0-9a-f]{32}$/.test(nonce)) return false;
    const expires = this.#nonces.get(nonce);
    if (expires === undefined) return false;
    if (expires <= this.#now()) {
      this.#nonces.delete(nonce);
      return false;
    }
    return true;
  }

  get active(): number {
    return this.#nonces.size;
  }

  /** The echo body for an accepted request. */
  echo(nonce: string, remoteAddress: string, method: string, rawHeaders: readonly string[]): JudgeEcho {
    const headers: Array<[string, string]> = [];
    for (let i = 0; i + 1 < rawHeaders.length; i += 2) headers.push([rawHeaders[i]!, rawHeaders[i + 1]!]);
    return { nonce, remote_address: normalizeAddress(remoteAddress), method, headers };
  }

  #sweep(): void {
    const now = this.#now();
    for (const [nonce, expires] of this.#nonces) if (expires <= now) this.#nonces.delete(nonce);
    // Map iteration is insertion order, so these are the oldest.
    for (const nonce of this.#nonces.keys()) {
      if (this.#nonces.size < JUDGE_MAX_NONCES) break;
      this.#nonces.delete(nonce);
    }
  }
}

/** `::ffff:1.2.3.4` → `1.2.3.4`: sockets on a dual-stack listener spell IPv4 peers that way. */
export function normalizeAddress(address: string): string {
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return m ? m[1]! : address.toLowerCase();
}
