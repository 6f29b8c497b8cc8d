/**
 * Standard Webhooks signatures (standard-webhooks/standard-webhooks, spec/standard-webhooks.md):
 * the receiver recomputes HMAC-SHA256 over `{webhook-id}.{webhook-timestamp}.{body}` with the
 * key it shares with us and compares it with one of the `v1,` entries of `webhook-signature`.
 */
import { createHmac, randomBytes } from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';
export const WEBHOOK_ID_PREFIX = 'msg_';
const WEBHOOK_ID_BYTES = 16;

export interface WebhookHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/** A new event id: the same one goes with every retry of the event, so receivers can drop duplicates. */
export function newWebhookId(): string {
  return `${WEBHOOK_ID_PREFIX}${randomBytes(WEBHOOK_ID_BYTES).toString('base64url')}`;
}

/** The HMAC key of a `whsec_` secret: the base64 after the prefix, decoded. */
function keyOf(secret: string): Buffer {
  if (!secret.startsWith(SECRET_PREFIX)) throw new TypeError(`a webhook secret starts with ${SECRET_PREFIX}`);
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
  if (key.length === 0) throw new TypeError('a webhook secret holds a base64 key after its prefix');
  return key;
}

/** One `v1,<base64>` entry for one secret. */
export function sign(secret: string, id: string, timestampSeconds: number, body: string): string {
  const mac = createHmac('sha256', keyOf(secret)).update(`${id}.${timestampSeconds}.${body}`).digest('base64');
  return `v1,${mac}`;
}

/**
 * The three headers of a delivery. Every secret that still signs (the current one, and the
 * previous one during a rotation's overlap) adds its entry, space-separated, so a receiver that
 * knows either verifies.
 */
export function signedHeaders(secrets: readonly string[], id: string, timestampSeconds: number, body: string): WebhookHeaders {
  if (secrets.length === 0) throw new TypeError('signedHeaders: at least one secret');
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': secrets.map((s) => sign(s, id, timestampSeconds, body)).join(' '),
  };
}
