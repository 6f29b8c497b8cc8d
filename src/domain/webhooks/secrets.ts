import { randomBytes } from 'node:crypto';
import type { Clock } from '../accounts/service.js';
import { AppError, RotationConflictError } from '../../errors.js';
import type { Store } from '../store.js';
import type { WebhookSecret } from './repository.js';
import { SECRET_PREFIX } from './signing.js';
import { DAY_MS } from '../../lib/time.js';

/** After a rotation the old secret signs too, for this long (docs/webhooks.md: 24 hours). */
export const PREVIOUS_SECRET_MS = DAY_MS;
/** Signatures on one delivery at most (docs/webhooks.md): the current secret and two replaced ones. */
export const MAX_SIGNING_SECRETS = 3;
/** Standard Webhooks: `whsec_` + base64 of 24 to 64 random bytes. */
const SECRET_BYTES = 32;
/** A rotation that meets a concurrent one reads again and decides again, this many times at most. */
const ROTATE_TRIES = 5;

export function newWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString('base64')}`;
}

/** A replaced secret and when it stops signing. */
interface Replaced {
  secret: string;
  until: string;
}

/** The replaced secrets that still sign at `at`, newest first. */
function replacedAt(secret: WebhookSecret, at: number): Replaced[] {
  const all: Array<[string | null | undefined, string | null | undefined]> = [
    [secret.previous_secret, secret.previous_until],
    [secret.older_secret, secret.older_until],
  ];
  return all.flatMap(([s, until]) => (s && until && Date.parse(until) > at ? [{ secret: s, until }] : []));
}

/**
 * Each account's webhook signing secret: made on first read, rotated with a day's overlap. Every
 * secret replaced within the last 24 hours keeps signing until its own 24 hours end.
 */
export class WebhookSecrets {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock = () => new Date(),
  ) {}

  get(accountId: number): Promise<WebhookSecret> {
    return this.store.webhookSecrets.get(accountId, { secret: newWebhookSecret(), created_at: this.clock().toISOString() });
  }

  /**
   * A new secret; the current one signs for 24 hours more beside those replaced before it whose
   * day is not over. RotationConflictError when that would make more than MAX_SIGNING_SECRETS.
   */
  async rotate(accountId: number): Promise<WebhookSecret> {
    for (let i = 0; i < ROTATE_TRIES; i++) {
      const now = this.clock().getTime();
      const next = { secret: newWebhookSecret(), created_at: new Date(now).toISOString() };
      // An account that never had a secret gets this one, with nothing before it.
      const current = await this.store.webhookSecrets.get(accountId, next);
      if (current.secret === next.secret) return current;
      const replaced = replacedAt(current, now);
      if (replaced.length >= MAX_SIGNING_SECRETS - 1) {
        const retryAt = replaced.map((r) => r.until).sort()[0]!;
        throw new RotationConflictError(retryAt, Math.max(1, Math.ceil((Date.parse(retryAt) - now) / 1000)), MAX_SIGNING_SECRETS);
      }
      const rotated = await this.store.webhookSecrets.rotate(accountId, next, new Date(now + PREVIOUS_SECRET_MS).toISOString(), {
        expected: current.secret,
        older: replaced[0] ?? null,
      });
      if (rotated !== null) return rotated;
    }
    throw new AppError('conflict', 'the webhook secret is being rotated by other requests at this moment; try again in a second', undefined, { 'retry-after': '1' });
  }

  /** Until when the previous secret still signs, as of `at`; null when there is none or its overlap is over. */
  previousValidUntil(secret: WebhookSecret, at: number = this.clock().getTime()): string | null {
    return secret.previous_secret !== null && secret.previous_until !== null && Date.parse(secret.previous_until) > at ? secret.previous_until : null;
  }

  /** Until when each replaced secret still signs, as of `at`, newest first. */
  replacedValidUntil(secret: WebhookSecret, at: number = this.clock().getTime()): string[] {
    return replacedAt(secret, at).map((r) => r.until);
  }

  /** The secrets a delivery at `at` is signed with: the current one, then each replaced one still in its 24 hours. */
  signingSecrets(secret: WebhookSecret, at: number = this.clock().getTime()): string[] {
    return [secret.secret, ...replacedAt(secret, at).map((r) => r.secret)];
  }
}
