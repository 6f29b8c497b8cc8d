import type { FastifyInstance } from 'fastify';
import { registerOperation } from '../operation.js';
import type { RouteDeps } from './deps.js';
import { portOperations } from '../../operations/ports.js';

export async function portRoutes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  for (const op of portOperations) registerOperation(app, deps, op);
}
