import { createHmac, timingSafeEqual } from 'node:crypto';
import { WebhookVerificationError } from './errors.js';
import type { WebhookEvent } from './types.js';

/**
 * Verifies a webhook delivery as the Standard Webhooks specification says: HMAC-SHA256, keyed by
 * the secret's base64 after `whsec_`, over `{webhook-id}.{webhook-timestamp}.{body}`, equal to
 * one of the `v1,<base64>` entries of `webhook-signature` (during a rotation a delivery carries
 * one per secret that still signs), and a timestamp within five minutes of now.
 */

export interface VerifyOptions {
  /** How far the timestamp may be from now, either way (default 300). */
  toleranceSeconds?: number;
  /** Now, in milliseconds (tests). */
  now?: number;
}

const PREFIX = 'whsec_';
const DEFAULT_TOLERANCE_S = 5 * 60;
/** More entries than a rotation ever makes (three) are not looked at: each costs a comparison. */
const MAX_SIGNATURES = 8;
/** A header longer than its eight entries could be is not read. */
const MAX_HEADER_CHARS = 1024;

function header(headers: Headers | Record<string, string | string[] | undefined>, name: string): string {
  let value: string | string[] | null | undefined;
  if (headers instanceof Headers) value = headers.get(name);
  else value = headers[name] ?? Object.entries(headers).find(([k]) => k.toLowerCase() === name)?.[1];
  if (Array.isArray(value)) value = value.join(' ');
  if (value === undefined || value === null || value === '') throw new WebhookVerificationError(`the delivery has no ${name} header`);
  if (value.length > MAX_HEADER_CHARS) throw new WebhookVerificationError(`the ${name} header is over ${MAX_HEADER_CHARS} characters`);
  return value;
}

/** The event of a delivery whose signature and timestamp verify; WebhookVerificationError otherwise. */
export function verifyWebhook(
  secret: string,
  headers: Headers | Record<string, string | string[] | undefined>,
  body: string,
  opts: VerifyOptions = {},
): WebhookEvent {
  const key = Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64');
  if (key.length === 0) throw new TypeError('the webhook secret holds no key: give it as GET /api/webhooks/secret shows it (whsec_…)');
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!/^\d{1,12}$/.test(timestamp)) throw new WebhookVerificationError('the webhook-timestamp header is not a number of seconds');
  const nowSeconds = Math.floor((opts.now ?? Date.now()) / 1000);
  const tolerance = opts.toleranceSeconds ?? DEFAULT_TOLERANCE_S;
  if (Math.abs(nowSeconds - Number(timestamp)) > tolerance) {
    throw new WebhookVerificationError(`the webhook-timestamp is more than ${tolerance} seconds from now: a replay, or a clock that is wrong`);
  }
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest();
  const matched = signatures
    .split(' ')
    .slice(0, MAX_SIGNATURES)
    .some((entry) => {
      if (!entry.startsWith('v1,')) return false;
      const given = Buffer.from(entry.slice(3), 'base64');
      return given.length === expected.length && timingSafeEqual(given, expected);
    });
  if (!matched) throw new WebhookVerificationError('no signature of the delivery matches the secret');
  let event: unknown;
  try {
    event = JSON.parse(body);
  } catch {
    throw new WebhookVerificationError('the delivery is signed but its body is not JSON');
  }
  return event as WebhookEvent;
}
