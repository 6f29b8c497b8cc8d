import { Type } from 'typebox';
import { USAGE_DAYS_DEFAULT, USAGE_DAYS_MAX, USAGE_DAYS_MIN } from '../../domain/usage/service.js';

const Window = Type.Object({
  limit: Type.Integer(),
  used: Type.Integer(),
  remaining: Type.Integer(),
  reset_at: Type.String({ description: 'end of the window, YYYY-MM-DD HH:MM:SS UTC' }),
});

const Counts = {
  requests: Type.Integer({ description: 'successful + failed + rate_limited' }),
  successful: Type.Integer({ description: '2xx answers' }),
  failed: Type.Integer({ description: 'answers other than 2xx and 429' }),
  rate_limited: Type.Integer({ description: '429 answers (not counted as calls)' }),
};

export const UsageStats = Type.Object({
  plan: Type.String(),
  api_calls_used: Type.Integer({ description: 'calls today (successful + failed), UTC' }),
  api_calls_limit: Type.Integer(),
  windows: Type.Object({ minute: Window, hour: Window, day: Window }),
  today: Type.Object(Counts),
  by_endpoint: Type.Record(Type.String(), Type.Integer(), { description: 'calls today per endpoint' }),
});

export const HistoryDay = Type.Object({ date: Type.String({ description: 'YYYY-MM-DD' }), ...Counts });

export const ExportRow = Type.Object({
  date: Type.String(),
  endpoint: Type.String(),
  ...Counts,
  avg_response_time: Type.Number({ description: 'milliseconds' }),
});

const Days = Type.Integer({
  minimum: USAGE_DAYS_MIN,
  maximum: USAGE_DAYS_MAX,
  default: USAGE_DAYS_DEFAULT,
  description: `how many UTC days back, today included (${USAGE_DAYS_MIN}-${USAGE_DAYS_MAX})`,
});

export const HistoryQuery = Type.Object({ days: Type.Optional(Days) });
export const ExportQuery = Type.Object({
  format: Type.Optional(Type.Enum(['json', 'csv'], { default: 'json', description: 'json or csv; case-insensitive' })),
  days: Type.Optional(Days),
});
