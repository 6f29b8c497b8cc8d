import { createHmac, timingSafeEqual } from 'node:crypto';
import type { NonceUse } from './judge-repository.js';
import type { JudgeEcho } from './types.js';

/**
 * What makes the judge's word its own. Nonces, echoes and upload counts carry an HMAC-SHA256 tag
 * under the judge's key, which only our instances hold (NETDIAG_JUDGE_SECRET, or the secret the
 * first instance stored in the database). A proxy sees every nonce and every answer it carries,
 * so it can replay, drop or rewrite them, but it cannot make up a nonce, nor an echo or a count
 * the judge did not sign. Each tag's input starts with a label of its purpose, so a tag made for
 * one purpose never verifies as another.
 */

const LABEL = {
  nonce: 'netdiag-judge-nonce-v1',
  echo: 'netdiag-judge-echo-v1',
  upload: 'netdiag-judge-upload-v1',
} as const;

/** The uses a nonce grants, one bit each, in its first byte. */
const USE_BITS: Readonly<Record<NonceUse, number>> = { echo: 1, download: 2, upload: 4 };

// A nonce is hex in the URL: uses (1 byte) | expiry, epoch ms (6) | random id (16) | tag (16).
const EXPIRY_AT = 1;
const EXPIRY_BYTES = 6;
const ID_AT = EXPIRY_AT + EXPIRY_BYTES;
const ID_BYTES = 16;
const TAG_AT = ID_AT + ID_BYTES;
const TAG_BYTES = 16;
const NONCE_BYTES = TAG_AT + TAG_BYTES;
/** 78 hex characters: under Fastify's 100-character limit on a path parameter. */
const NONCE_PATTERN = /^[0-9a-f]{78}$/;

function tag(key: Buffer, label: string, data: string | Buffer): Buffer {
  return createHmac('sha256', key).update(label).update('\n').update(data).digest();
}

function sameTag(expected: Buffer, given: unknown): boolean {
  if (typeof given !== 'string' || given.length !== expected.length * 2 || !/^[0-9a-f]+$/.test(given)) return false;
  return timingSafeEqual(expected, Buffer.from(given, 'hex'));
}

export interface NonceFields {
  /** The random part, hex: the nonce's name in the database. */
  id: string;
  /** Epoch ms. */
  expiresAt: number;
  uses: number;
}

/** The `uses` field of a nonce granting these uses. */
export function useBits(uses: readonly NonceUse[]): number {
  return uses.reduce((bits, use) => bits | USE_BITS[use], 0);
}

/** A new nonce granting `uses` until `expiresAt` (epoch ms), made from 16 random bytes `id`. */
export function mintNonce(key: Buffer, uses: readonly NonceUse[], expiresAt: number, id: Buffer): string {
  const nonce = Buffer.alloc(NONCE_BYTES);
  nonce[0] = useBits(uses);
  nonce.writeUIntBE(expiresAt, EXPIRY_AT, EXPIRY_BYTES);
  id.copy(nonce, ID_AT, 0, ID_BYTES);
  tag(key, LABEL.nonce, nonce.subarray(0, TAG_AT)).copy(nonce, TAG_AT, 0, TAG_BYTES);
  return nonce.toString('hex');
}

/** The fields of a nonce we made, or null for anything else (malformed, or tagged under another key). */
export function readNonce(key: Buffer, nonce: unknown): NonceFields | null {
  if (typeof nonce !== 'string' || !NONCE_PATTERN.test(nonce)) return null;
  const bytes = Buffer.from(nonce, 'hex');
  const expected = tag(key, LABEL.nonce, bytes.subarray(0, TAG_AT)).subarray(0, TAG_BYTES);
  if (!timingSafeEqual(expected, bytes.subarray(TAG_AT))) return null;
  return { id: bytes.subarray(ID_AT, TAG_AT).toString('hex'), expiresAt: bytes.readUIntBE(EXPIRY_AT, EXPIRY_BYTES), uses: bytes[0]! };
}

export function grants(fields: NonceFields, use: NonceUse): boolean {
  return (fields.uses & USE_BITS[use]) !== 0;
}

/** What an echo's tag covers: every field, in a fixed order, as JSON (unambiguous, and cheap to rebuild). */
function echoText(echo: JudgeEcho): string {
  return JSON.stringify([echo.nonce, echo.remote_address, echo.method, echo.headers]);
}

export function signEcho(key: Buffer, echo: JudgeEcho): string {
  return tag(key, LABEL.echo, echoText(echo)).toString('hex');
}

export function echoSigned(key: Buffer, echo: JudgeEcho, signature: unknown): boolean {
  return sameTag(tag(key, LABEL.echo, echoText(echo)), signature);
}

/** The judge's receipt for an upload: the byte count it received, for this nonce. */
export function signUpload(key: Buffer, nonce: string, bytes: number): string {
  return tag(key, LABEL.upload, `${nonce} ${bytes}`).toString('hex');
}

export function uploadSigned(key: Buffer, nonce: string, bytes: number, signature: unknown): boolean {
  return sameTag(tag(key, LABEL.upload, `${nonce} ${bytes}`), signature);
}
