import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { clearCookie, readCookie, setCookie } from './cookies.js';
import { sessionSecret } from './session.js';

/**
 * What a form's POST leaves for the page its 303 leads to (post/redirect/get): a new token or
 * invitation link, shown once, or what an admin change did. It travels in a short-lived cookie,
 * never in a URL, sealed (AES-256-GCM) under a key derived from this session's cookie secret,
 * which the server never stores: no other session, and no instance without that cookie, can open
 * it, and any instance behind a load balancer that gets the cookie can. The GET that shows it
 * forgets it, so a reload shows it no more.
 */
const FLASH_COOKIE = 'netdiag_flash';
/** Long enough for the redirect's GET, however slow the link. */
const FLASH_MAX_AGE_S = 600;
/** A cookie longer than this is not ours: it is not decrypted. */
const FLASH_MAX_CHARS = 3_000;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** What a page can leave for the next: a name per page, so one page never shows another's. */
export type FlashKind = 'token' | 'admin';

function keyOf(secret: string): Buffer {
  return createHmac('sha256', secret).update('netdiag flash v1').digest();
}

/** Leaves `value` for the next GET of `kind`'s page in this session (a later keep replaces it). */
export function keepFlash(request: FastifyRequest, reply: FastifyReply, kind: FlashKind, value: unknown): void {
  const secret = sessionSecret(request);
  if (secret === undefined) return;
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', keyOf(secret), iv);
  cipher.setAAD(Buffer.from(kind));
  const sealed = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
  setCookie(request, reply, FLASH_COOKIE, `${kind}.${Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64url')}`, FLASH_MAX_AGE_S);
}

/** What the last POST left for `kind`'s page in this session, forgotten as it is read; undefined: nothing. */
export function takeFlash<T>(request: FastifyRequest, reply: FastifyReply, kind: FlashKind): T | undefined {
  const raw = readCookie(request, FLASH_COOKIE);
  if (raw === undefined || !raw.startsWith(`${kind}.`)) return undefined;
  clearCookie(request, reply, FLASH_COOKIE);
  const secret = sessionSecret(request);
  if (secret === undefined || raw.length > FLASH_MAX_CHARS) return undefined;
  try {
    const bytes = Buffer.from(raw.slice(kind.length + 1), 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', keyOf(secret), bytes.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(kind));
    decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    const text = Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
    // Authenticated under this session's key: it is what keepFlash wrote.
    return JSON.parse(text) as T;
  } catch {
    // Another session's, altered, or cut: nothing.
    return undefined;
  }
}
