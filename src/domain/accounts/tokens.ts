import { createHash, randomBytes } from 'node:crypto';

/** `nd_` + TOKEN_RANDOM_LENGTH base62 characters: ~238 bits from the CSPRNG. */
export const TOKEN_PREFIX = 'nd_';
export const TOKEN_RANDOM_LENGTH = 40;
export const TOKEN_PATTERN = /^nd_[0-9A-Za-z]{32,128}$/;
/** Random characters a token's `prefix` shows after `nd_`: enough to tell tokens apart, too few to matter as a secret. */
const TOKEN_PREFIX_SHOWN = 6;

/** What lists show of a token: `nd_` and its first TOKEN_PREFIX_SHOWN characters (docs/security.md). */
export function tokenPrefix(token: string): string {
  return token.slice(0, TOKEN_PREFIX.length + TOKEN_PREFIX_SHOWN);
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
// 62 * 4 = 248: bytes at or above it are rejected so every character is equally likely.
const UNBIASED_LIMIT = 248;

export function generateToken(): string {
  let out = TOKEN_PREFIX;
  while (out.length < TOKEN_PREFIX.length + TOKEN_RANDOM_LENGTH) {
    for (const byte of randomBytes(64)) {
      if (byte < UNBIASED_LIMIT) out += BASE62[byte % 62];
      if (out.length === TOKEN_PREFIX.length + TOKEN_RANDOM_LENGTH) break;
    }
  }
  return out;
}

/** Tokens carry enough entropy that a plain SHA-256 (no salt, no stretching) cannot be reversed. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}
