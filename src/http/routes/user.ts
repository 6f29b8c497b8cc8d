import type { FastifyInstance } from 'fastify';
import { planLimits } from '../../domain/accounts/plans.js';
import { ok } from '../reply.js';
import { responses } from '../schemas/common.js';
import { User } from '../schemas/user.js';
import type { RouteDeps } from './deps.js';
import { accountOf, callsToday } from '../plugins/auth.js';

export async function userRoutes(app: FastifyInstance, _deps: RouteDeps): Promise<void> {
  app.get(
    '/user',
    { schema: { operationId: 'getUser', summary: 'The account the token belongs to', tags: ['account'], response: responses(User) } },
    // Synchronous: nothing here waits, and an async handler costs a promise per request.
    (request) => {
      const account = accountOf(request);
      const limits = planLimits(account.plan);
      const user: User = {
        id: account.id,
        name: account.name,
        email: account.email,
        plan: account.plan,
        api_calls_used: callsToday(request),
        api_calls_limit: limits.requests_per_day,
        rate_limit: { ...limits },
        created_at: account.created_at,
      };
      return ok(user, 'account retrieved');
    },
  );
}
