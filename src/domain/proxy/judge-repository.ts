/** What a judge nonce may be used for, each at most once. */
export type NonceUse = 'echo' | 'download' | 'upload';

/**
 * The proxy judge's shared state: which uses of which nonces are spent, and the judge's signing
 * secret. It lives in the database so that every instance behind one judge URL agrees on both:
 * a nonce issued by one instance is accepted once by whichever instance the proxy reaches.
 */
export interface JudgeRepository {
  /**
   * The stored judge secret; `candidate` becomes it when no instance has stored one yet (the
   * first writer wins, every later caller reads the winner).
   */
  secret(candidate: string): Promise<string>;
  /** Spends one use of a nonce: true for exactly one caller on any connection, false ever after. */
  spend(id: string, use: NonceUse, expiresAt: number): Promise<boolean>;
  /** Spends whatever uses of these nonces are left (their checks ended). */
  spendAll(nonces: ReadonlyArray<{ id: string; expiresAt: number }>): Promise<void>;
  /** Forgets spent uses of nonces that expired at or before `before` (epoch ms); returns the rows removed. */
  purge(before: number): Promise<number>;
  /**
   * Records the judge URL an API instance serves (it replaces the one recorded before), for the
   * processes that serve none (`netdiag worker`) to send proxies to.
   */
  recordUrl(url: string): Promise<void>;
  /** The judge URL an API instance recorded last, or null when none ever did. */
  recordedUrl(): Promise<string | null>;
}
