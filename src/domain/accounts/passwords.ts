import { hash, verify, type Algorithm } from '@node-rs/argon2';
import { ValidationError } from '../../errors.js';

/**
 * Dashboard passwords, hashed with Argon2id at OWASP's recommended parameters (19 MiB, two
 * passes, one lane). @node-rs/argon2 hashes on libuv's thread pool, so a login never stalls the
 * event loop. A stored hash made with other parameters is rehashed at the next successful login.
 */
/** Algorithm.Argon2id: a const enum, which isolated modules cannot read. */
const ARGON2ID = 2 as Algorithm;

export const ARGON2_PARAMS = { algorithm: ARGON2ID, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

/** NIST SP 800-63B asks for at least 8; the dashboard asks for 10. */
export const MIN_PASSWORD_LENGTH = 10;
/** Bounds the work an attacker can ask of the hasher with one request. */
export const MAX_PASSWORD_LENGTH = 256;

/** The rule a new password must satisfy, or the ValidationError saying which. */
export function checkNewPassword(password: string, field = 'password'): void {
  if (password.length < MIN_PASSWORD_LENGTH) throw new ValidationError(field, `must be at least ${MIN_PASSWORD_LENGTH} characters`);
  if (password.length > MAX_PASSWORD_LENGTH) throw new ValidationError(field, `must be at most ${MAX_PASSWORD_LENGTH} characters`);
}

/**
 * The password hasher: Argon2id by default; tests give one that counts (and holds) its work.
 * `verify` may throw on a malformed stored hash.
 */
export interface PasswordHasher {
  hash(password: string): Promise<string>;
  verify(phc: string, password: string): Promise<boolean>;
}

export const ARGON2_HASHER: PasswordHasher = {
  hash: (password) => hash(password, ARGON2_PARAMS),
  verify: (phc, password) => verify(phc, password),
};

export function hashPassword(password: string, hasher: PasswordHasher = ARGON2_HASHER): Promise<string> {
  return hasher.hash(password);
}

/** A PHC string's parameters, e.g. `$argon2id$v=19$m=19456,t=2,p=1$salt$hash`. */
function paramsOf(phc: string): { algorithm: string; m: number; t: number; p: number } | undefined {
  const match = /^\$(argon2(?:id|i|d))\$v=\d+\$m=(\d+),t=(\d+),p=(\d+)\$/.exec(phc);
  if (!match) return undefined;
  return { algorithm: match[1]!, m: Number(match[2]), t: Number(match[3]), p: Number(match[4]) };
}

/** Whether a stored hash was made with other parameters than ARGON2_PARAMS (and wants rehashing). */
export function needsRehash(phc: string): boolean {
  const params = paramsOf(phc);
  return (
    params === undefined ||
    params.algorithm !== 'argon2id' ||
    params.m !== ARGON2_PARAMS.memoryCost ||
    params.t !== ARGON2_PARAMS.timeCost ||
    params.p !== ARGON2_PARAMS.parallelism
  );
}

/** A well-formed hash of nothing anyone knows: checked when the e-mail is unknown, so both cases take as long. */
let decoy: Promise<string> | undefined;

/** Whether `password` matches `phc`; with no hash (unknown account, or no password set) it still does the work of one check. */
export async function verifyPassword(phc: string | null, password: string, hasher: PasswordHasher = ARGON2_HASHER): Promise<boolean> {
  if (password.length > MAX_PASSWORD_LENGTH) return false;
  if (phc === null) {
    decoy ??= hashPassword(`decoy-${Math.random()}`);
    await hasher.verify(await decoy, password).catch(() => false);
    return false;
  }
  try {
    return await hasher.verify(phc, password);
  } catch {
    // A malformed stored hash matches nothing.
    return false;
  }
}
