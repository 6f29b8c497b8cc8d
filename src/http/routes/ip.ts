import type { FastifyInstance } from 'fastify';
import { registerOperation } from '../operation.js';
import { ok } from '../reply.js';
import { responses } from '../schemas/common.js';
import type { RouteDeps } from './deps.js';
import { lookupIp } from '../../domain/ip/index.js';
import { IpLookupResult } from '../schemas/ip.js';
import { ipOperations } from '../../operations/ip.js';
import { operationIdOf } from '../../operations/names.js';

export async function ipRoutes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  for (const op of ipOperations) registerOperation(app, deps, op);
  app.get(
    '/ip/my-ip',
    { schema: { operationId: operationIdOf('/ip/my-ip'), summary: "The caller's own address (the forwarded one behind a trusted proxy)", tags: ['ip'], response: responses(IpLookupResult) } },
    async (request) => ok(await lookupIp(deps.ip, request.ip), 'your address'),
  );
}
