import type { FastifyInstance } from 'fastify';
import { ok } from '../reply.js';
import { responses } from '../schemas/common.js';
import type { RouteDeps } from './deps.js';
import { lookupIp } from '../../domain/ip/index.js';
import { IpLookupResult } from '../../operations/ip-lookup/schema.js';
import { operationIdOf } from '../../operations/names.js';

/** GET /ip/my-ip: the caller's own address, looked up as /ip/lookup would. */
export async function myIpRoute(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  app.get(
    '/ip/my-ip',
    { schema: { operationId: operationIdOf('/ip/my-ip'), summary: "The caller's own address (the forwarded one behind a trusted proxy)", tags: ['ip'], response: responses(IpLookupResult) } },
    async (request) => ok(await lookupIp(deps.ip, request.ip), 'your address'),
  );
}
