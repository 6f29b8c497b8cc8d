import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import { lookupBulk, lookupIp } from '../../domain/ip/index.js';
import { ok } from '../reply.js';
import { responses } from '../schemas/common.js';
import { IpBulkBody, IpBulkItem, IpLookupBody, IpLookupResult } from '../schemas/ip.js';
import type { RouteDeps } from './deps.js';

export async function ipRoutes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  app.post(
    '/ip/lookup',
    { schema: { summary: 'Geolocation, ISP/ASN and optional security analysis of an IP address', tags: ['ip'], body: IpLookupBody, response: responses(IpLookupResult) } },
    async (request) => {
      const { ip, ...opts } = request.body as Static<typeof IpLookupBody>;
      return ok(await lookupIp(deps.ip, ip, opts), 'address looked up');
    },
  );
  app.post(
    '/ip/lookup-bulk',
    { schema: { summary: 'Look up to 100 addresses at once, in input order', tags: ['ip'], body: IpBulkBody, response: responses(Type.Array(IpBulkItem)) } },
    async (request) => {
      const { ips, ...opts } = request.body as Static<typeof IpBulkBody>;
      const items = await lookupBulk(deps.ip, ips, opts);
      const failed = items.filter((i) => 'error' in i).length;
      return ok(items, `${items.length - failed} looked up${failed ? `, ${failed} invalid` : ''}`);
    },
  );
  app.get(
    '/ip/my-ip',
    { schema: { summary: "The caller's own address (the forwarded one behind a trusted proxy)", tags: ['ip'], response: responses(IpLookupResult) } },
    async (request) => ok(await lookupIp(deps.ip, request.ip), 'your address'),
  );
}
