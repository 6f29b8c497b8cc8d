import { Type, type Static } from 'typebox';

export const RateLimitInfo = Type.Object({
  requests_per_minute: Type.Integer(),
  requests_per_hour: Type.Integer(),
  requests_per_day: Type.Integer(),
});

export const User = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  email: Type.String(),
  plan: Type.String({ description: 'free, basic, pro or enterprise' }),
  api_calls_used: Type.Integer({ description: 'calls counted in the current UTC day' }),
  api_calls_limit: Type.Integer({ description: "the plan's daily limit" }),
  rate_limit: RateLimitInfo,
  created_at: Type.String({ description: 'ISO 8601 UTC' }),
});
export type User = Static<typeof User>;
