import type { FastifyInstance } from 'fastify';
import { outcomeOf, utcDay } from '../../domain/usage/service.js';
import type { GroupCommitRecorder } from '../../infra/usage/group-commit.js';
import type { RateLimiter } from '../../domain/usage/rate-limit.js';
import type { UsageRecord } from '../../domain/usage/repository.js';
import { accountKey } from './auth.js';
import { round2 } from '../../lib/round.js';
import { DAY_MS } from '../../lib/time.js';

/**
 * Records every authenticated request (429s included, as rate_limited) before its response
 * leaves: onSend waits for the group commit that holds the record. The endpoint is the route
 * that matched (set by the access check), whatever spelling of its path the client sent.
 */
export function registerUsageRecording(app: FastifyInstance, recorder: GroupCommitRecorder): void {
  // The text of the day being recorded, made once a day rather than once per request: formatting
  // it (a Date and its ISO text) was 3 % of the CPU of a cheap request (bench/auth-overhead.ts).
  let today = { day: -1, text: '' };
  const dayOf = (at: number): string => {
    const day = Math.floor(at / DAY_MS);
    if (day !== today.day) today = { day, text: utcDay(at) };
    return today.text;
  };
  app.addHook('onSend', async (request, reply, payload) => {
    const account = request.account;
    // Routes marked `uncounted` (reading a job) are no calls: nothing is recorded.
    if (!account || request.uncounted) return payload;
    // Written, or kept to be written when the store is back (the recorder logs an outage once).
    await recorder.record({
      account_id: account.id,
      day: dayOf(request.receivedAt),
      endpoint: request.endpoint,
      outcome: outcomeOf(reply.statusCode),
      duration_ms: round2(reply.elapsedTime),
      at: request.receivedAt,
    });
    return payload;
  });
}

/**
 * Tells the limiter which admitted calls have their usage records written (the recorder calls it
 * after each write): a successful or failed record is an admitted call; a rate_limited one never
 * was, or was refunded.
 */
export function callsRecordedTo(limiter: RateLimiter): ((records: readonly UsageRecord[]) => void) | undefined {
  if (!limiter.recorded) return undefined;
  return (records) => {
    const calls: Array<{ key: string; at: number }> = [];
    for (const r of records) if (r.outcome !== 'rate_limited' && r.at !== undefined) calls.push({ key: accountKey(r.account_id), at: r.at });
    limiter.recorded!(calls);
  };
}
