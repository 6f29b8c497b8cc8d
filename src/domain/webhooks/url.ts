/**
 * A webhook URL's own rules (before any resolution): one check, used where a job's body is
 * taken (webhookUrlOf, the HTTP layer) and where the delivery checks the URL it will send to
 * (parseWebhookUrl). The two say the same rules in different words, and each keeps its own.
 */
import { ValidationError } from '../../errors.js';

/** The longest webhook URL accepted. */
export const WEBHOOK_URL_MAX_CHARS = 2_048;

const FIELD = 'webhook_url';

/** What each caller says for each rule a URL breaks (the one thing the two checks differ in). */
interface WebhookUrlWords {
  notString: string;
  empty: string;
  tooLong: string;
  notUrl: string;
  notHttp: string;
}

/** A job body's `webhook_url`, as the 400 of POST /api/... with Prefer: respond-async says it. */
const JOB_BODY_WORDS: WebhookUrlWords = {
  notString: 'must be a string (an http:// or https:// URL)',
  empty: 'must be an http:// or https:// URL',
  tooLong: `must be at most ${WEBHOOK_URL_MAX_CHARS} characters`,
  notUrl: 'must be an http:// or https:// URL',
  notHttp: 'must be an http:// or https:// URL',
};

/** The delivery's check of a URL (WebhookDelivery.checkUrl). */
const DELIVERY_WORDS: WebhookUrlWords = {
  notString: 'must be an http or https URL',
  empty: 'must be an http or https URL',
  tooLong: `at most ${WEBHOOK_URL_MAX_CHARS} characters`,
  notUrl: 'must be an absolute http or https URL',
  notHttp: 'must use http or https',
};

/** A string of 1 to WEBHOOK_URL_MAX_CHARS characters that parses as an http or https URL; ValidationError(field, words) otherwise. */
function parseHttpUrl(input: unknown, field: string, words: WebhookUrlWords): URL {
  if (typeof input !== 'string') throw new ValidationError(field, words.notString);
  if (input.length === 0) throw new ValidationError(field, words.empty);
  if (input.length > WEBHOOK_URL_MAX_CHARS) throw new ValidationError(field, words.tooLong);
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    throw new ValidationError(field, words.notUrl);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ValidationError(field, words.notHttp);
  return url;
}

/** `webhook_url` of a job's body: absent, or an http(s) URL (ValidationError otherwise). */
export function webhookUrlOf(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  return parseHttpUrl(value, FIELD, JOB_BODY_WORDS).toString();
}

/** The URL's own rules (before any resolution): http or https, no credentials, bounded length. */
export function parseWebhookUrl(input: unknown, field = FIELD): URL {
  const url = parseHttpUrl(input, field, DELIVERY_WORDS);
  if (url.username !== '' || url.password !== '') throw new ValidationError(field, 'must not carry credentials (user:password@)');
  if (url.hostname === '') throw new ValidationError(field, 'must name a host');
  return url;
}
