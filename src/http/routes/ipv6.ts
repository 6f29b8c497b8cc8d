import type { FastifyInstance } from 'fastify';
import { registerOperation } from '../operation.js';
import type { RouteDeps } from './deps.js';
import { ipv6Operations } from '../../operations/ipv6.js';

export async function ipv6Routes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  for (const op of ipv6Operations) registerOperation(app, deps, op);
}
