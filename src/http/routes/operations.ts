import type { FastifyInstance } from 'fastify';
import { OPERATIONS } from '../../operations/index.js';
import { registerOperation } from '../operation.js';
import type { RouteDeps } from './deps.js';
import { myIpRoute } from './ip.js';

/**
 * Every operation's route (src/http/operation.ts), in the order of OPERATIONS, which is the
 * document's. GET /ip/my-ip is no operation (no body, no job): it follows the ip operations, where
 * the document has always listed it.
 */
export async function operationRoutes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  const lastIp = OPERATIONS.filter((op) => op.tags.includes('ip')).at(-1);
  for (const op of OPERATIONS) {
    registerOperation(app, deps, op);
    if (op === lastIp) await myIpRoute(app, deps);
  }
}
