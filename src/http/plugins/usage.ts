import type { FastifyInstance } from 'fastify';
import { outcomeOf, utcDay } from '../../domain/usage/service.js';
import type { GroupCommitRecorder } from '../../infra/usage/group-commit.js';
import { round2 } from '../../lib/round.js';
import { DAY_MS } from '../../lib/time.js';

/** One call as usage records it: whose, of which endpoint, how it ended and how long it took. */
export interface Call {
  accountId: number;
  endpoint: string;
  status: number;
  durationMs: number;
  /** When it arrived, epoch ms. */
  at: number;
}

/**
 * Records calls through the group commit: resolves once the record is written, or kept to be
 * written when the store is back (the recorder logs an outage once).
 */
export function callRecorder(recorder: GroupCommitRecorder): (call: Call) => Promise<void> {
  // The text of the day being recorded, made once a day rather than once per request: formatting
  // it (a Date and its ISO text) was 3 % of the CPU of a cheap request (bench/auth-overhead.ts).
  let today = { day: -1, text: '' };
  const dayOf = (at: number): string => {
    const day = Math.floor(at / DAY_MS);
    if (day !== today.day) today = { day, text: utcDay(at) };
    return today.text;
  };
  return (call) =>
    recorder.record({
      account_id: call.accountId,
      day: dayOf(call.at),
      endpoint: call.endpoint,
      outcome: outcomeOf(call.status),
      duration_ms: round2(call.durationMs),
      at: call.at,
    });
}

/**
 * Records every authenticated request (429s included, as rate_limited) before its response
 * leaves: onSend waits for the group commit that holds the record. The endpoint is the route
 * that matched (set by the access check), whatever spelling of its path the client sent.
 */
export function registerUsageRecording(app: FastifyInstance, record: (call: Call) => Promise<void>): void {
  app.addHook('onSend', async (request, reply, payload) => {
    const account = request.account;
    // Routes marked `uncounted` (reading a job) are no calls: nothing is recorded.
    if (!account || request.uncounted) return payload;
    await record({ accountId: account.id, endpoint: request.endpoint, status: reply.statusCode, durationMs: reply.elapsedTime, at: request.receivedAt });
    return payload;
  });
}
