import type { FastifyInstance } from 'fastify';
import type { WebhookSecrets } from '../../domain/webhooks/secrets.js';
import type { WebhookSecret } from '../../domain/webhooks/repository.js';
import { accountOf } from '../plugins/auth.js';
import { ok } from '../reply.js';
import { NoBody, responses } from '../schemas/common.js';
import { errorResponse } from '../schemas/errors.js';
import { WebhookSecretView } from '../schemas/webhooks.js';

/** The account's webhook signing secret (docs/jobs.md). */
export async function webhookRoutes(app: FastifyInstance, deps: { secrets: WebhookSecrets; now?: () => number }): Promise<void> {
  const now = deps.now ?? Date.now;
  // The previous secret's overlap only while it lasts: after it, it signs nothing.
  const view = (secret: WebhookSecret): WebhookSecretView => {
    const at = now();
    return {
      secret: secret.secret,
      created_at: secret.created_at,
      previous_valid_until: deps.secrets.previousValidUntil(secret, at),
      replaced_valid_until: deps.secrets.replacedValidUntil(secret, at),
    };
  };
  app.get(
    '/webhooks/secret',
    { schema: { operationId: 'getWebhookSecret', summary: 'The signing secret of webhook deliveries (made on first read)', tags: ['webhooks'], response: responses(WebhookSecretView) } },
    async (request) => ok(view(await deps.secrets.get(accountOf(request).id)), 'webhook signing secret'),
  );

  app.post(
    '/webhooks/secret/rotate',
    {
      schema: {
        operationId: 'rotateWebhookSecret',
        summary: 'A new signing secret; the old one signs too for 24 hours (409 when that would make a fourth signature)',
        tags: ['webhooks'],
        body: NoBody,
        response: { ...responses(WebhookSecretView), 409: errorResponse(409) },
      },
    },
    async (request) => ok(view(await deps.secrets.rotate(accountOf(request).id)), 'webhook signing secret rotated; the previous one signs too until previous_valid_until'),
  );
}
