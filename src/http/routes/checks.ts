import type { FastifyInstance } from 'fastify';
import { registerOperation } from '../operation.js';
import type { RouteDeps } from './deps.js';
import { checkOperations } from '../../operations/checks.js';

export async function checkRoutes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  for (const op of checkOperations) registerOperation(app, deps, op);
}
