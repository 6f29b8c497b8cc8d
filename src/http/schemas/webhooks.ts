import { Type, type Static } from 'typebox';
import type { JobEventType } from '../../domain/jobs/types.js';
import { Nullable } from '../../operations/shared/schema.js';

export const WebhookSecretView = Type.Object({
  secret: Type.String({ description: 'whsec_ + base64 key: the Standard Webhooks signing secret of every delivery to this account' }),
  created_at: Type.String({ description: 'ISO 8601 UTC' }),
  previous_valid_until: Nullable(
    Type.String({ description: 'ISO 8601 UTC: until then deliveries carry a second signature by the secret before the last rotation' }),
  ),
  replaced_valid_until: Type.Array(Type.String(), {
    description:
      'ISO 8601 UTC, newest first: until when each secret replaced within the last 24 hours still signs deliveries (at most 2, so at most 3 signatures)',
  }),
});
export type WebhookSecretView = Static<typeof WebhookSecretView>;

/** The events a job's webhook receives, one per finished status. */
export const JOB_EVENT_TYPES = ['job.succeeded', 'job.failed', 'job.cancelled'] as const satisfies readonly JobEventType[];

/** The body POSTed to a job's webhook_url when it finishes (the document's `webhooks`). */
export const WebhookEvent = Type.Object(
  {
    type: Type.Enum([...JOB_EVENT_TYPES], { type: 'string', description: 'what happened: the job succeeded, failed or was cancelled' }),
    timestamp: Type.String({ description: 'ISO 8601 UTC: when the job finished' }),
    data: Type.Ref('Job', { description: 'the job as GET /api/jobs/{id} answers it, without its webhook_deliveries' }),
  },
  { $id: 'WebhookEvent', title: 'WebhookEvent' },
);
