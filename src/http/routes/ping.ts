import type { FastifyInstance } from 'fastify';
import { registerOperation } from '../operation.js';
import type { RouteDeps } from './deps.js';
import { pingOperations } from '../../operations/ping.js';

export async function pingRoutes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  for (const op of pingOperations) registerOperation(app, deps, op);
}
