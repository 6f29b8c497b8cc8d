import type { FastifyInstance } from 'fastify';
import { registerOperation } from '../operation.js';
import type { RouteDeps } from './deps.js';
import { dnsOperations } from '../../operations/dns.js';

export async function dnsRoutes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  for (const op of dnsOperations) registerOperation(app, deps, op);
}
