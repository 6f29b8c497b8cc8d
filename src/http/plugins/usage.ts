import type { FastifyInstance } from 'fastify';
import type { Call } from '../call-steps.js';

/**
 * Records every authenticated request (429s included, as rate_limited) before its response
 * leaves: the record step of src/http/call-steps.ts, in onSend, which waits for the group commit
 * that holds the record. The endpoint is the route that matched (set by the access check),
 * whatever spelling of its path the client sent.
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
