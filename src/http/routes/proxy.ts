import type { FastifyInstance } from 'fastify';
import { registerOperation } from '../operation.js';
import type { RouteDeps } from './deps.js';
import { proxyOperations } from '../../operations/proxy.js';

export async function proxyRoutes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  for (const op of proxyOperations) registerOperation(app, deps, op);
}
