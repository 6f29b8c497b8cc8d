import { randomBytes } from 'node:crypto';
import type { Clock } from '../accounts/service.js';
import type { Store, WebhookSecret } from '../../infra/store/store.js';
import { SECRET_PREFIX } from './signing.js';

/** After a rotation the old secret signs too, for this long (API.md: 24 hours). */
export const PREVIOUS_SECRET_MS = 86_400_000;
/** Standard Webhooks: `whsec_` + base64 of 24 to 64 random bytes. */
const SECRET_BYTES = 32;

export function newWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString('base64')}`;
}

/** Each account's webhook signing secret: made on first read, rotated with a day's overlap. */
export class WebhookSecrets {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock = () => new Date(),
  ) {}

  get(accountId: number): Promise<WebhookSecret> {
    return this.store.webhookSecrets.get(accountId, { secret: newWebhookSecret(), created_at: this.clock().toISOString() });
  }

  rotate(accountId: number): Promise<WebhookSecret> {
    const now = this.clock().getTime();
    return this.store.webhookSecrets.rotate(
      accountId,
      { secret: newWebhookSecret(), created_at: new Date(now).toISOString() },
      new Date(now + PREVIOUS_SECRET_MS).toISOString(),
    );
  }

  /** Until when the previous secret still signs, as of `at`; null when there is none or its overlap is over. */
  previousValidUntil(secret: WebhookSecret, at: number = this.clock().getTime()): string | null {
    return secret.previous_secret !== null && secret.previous_until !== null && Date.parse(secret.previous_until) > at ? secret.previous_until : null;
  }

  /** The secrets a delivery at `at` is signed with: the current one, and the previous one while it overlaps. */
  signingSecrets(secret: WebhookSecret, at: number = this.clock().getTime()): string[] {
    return this.previousValidUntil(secret, at) === null ? [secret.secret] : [secret.secret, secret.previous_secret!];
  }
}
