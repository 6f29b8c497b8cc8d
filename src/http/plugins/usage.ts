import type { FastifyInstance } from 'fastify';
import { outcomeOf, utcDay } from '../../domain/usage/service.js';
import type { GroupCommitRecorder } from '../../infra/usage/group-commit.js';
import { API_PREFIX } from './auth.js';
import { pathOf, type RouteIndex } from '../route-index.js';
import { round2 } from '../../round.js';

/** The endpoint name of a request that matched no route, so junk paths add one row, not many. */
export const UNMATCHED_ENDPOINT = '(unmatched)';

/**
 * Records every authenticated request (429s included, as rate_limited) before its response
 * leaves: onSend waits for the group commit that holds the record.
 */
export function registerUsageRecording(app: FastifyInstance, recorder: GroupCommitRecorder, routes: RouteIndex): void {
  // Endpoint names of the routes that exist, made once each rather than sliced per request.
  const endpoints = new Map<string, string>();
  const endpointOf = (method: string, path: string): string => {
    if (!routes.matches(method, path)) return UNMATCHED_ENDPOINT;
    let endpoint = endpoints.get(path);
    if (endpoint === undefined) {
      endpoint = path.slice(API_PREFIX.length) || '/';
      endpoints.set(path, endpoint);
    }
    return endpoint;
  };
  app.addHook('onSend', (request, reply, payload, done) => {
    const account = request.account;
    if (!account) return done(null, payload);
    const endpoint = endpointOf(request.method, pathOf(request.url));
    recorder.add(
      {
        account_id: account.id,
        day: utcDay(request.receivedAt),
        endpoint,
        outcome: outcomeOf(reply.statusCode),
        duration_ms: round2(reply.elapsedTime),
      },
      (err) => {
        // The answer still goes out; the failure is loud in the log and /readyz shows the database.
        if (err) request.log.error({ err }, 'usage record could not be written');
        done(null, payload);
      },
    );
  });
}
