import { Type, type Static } from 'typebox';
import { Nullable } from './common.js';

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
