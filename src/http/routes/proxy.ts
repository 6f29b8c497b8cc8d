import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import type { CheckFlags } from '../../domain/proxy/index.js';
import { ok } from '../reply.js';
import { responses } from '../schemas/common.js';
import { ProxyBulkBody, ProxyCheckBody, ProxyCheckResult } from '../schemas/proxy.js';
import type { RouteDeps } from './deps.js';
import { clientGoneSignal } from '../client-gone.js';

function flagsOf(body: Static<typeof ProxyCheckBody> | Static<typeof ProxyBulkBody>): CheckFlags {
  return {
    ssl: body.check_ssl ?? true,
    anonymity: body.check_anonymity ?? true,
    speed: body.check_speed ?? true,
    location: body.check_location ?? true,
  };
}

/**
 * "203.0.113.7:8080: working (socks5)", or with the reason when it is not ("…:user:***: failed
 * (refused our credentials (HTTP 407))"): the message answers what a caller reads it for.
 * `proxy` is the input with its password already replaced by ***.
 */
function checkMessage(result: { proxy: string; status: string; protocol: string | null; error: string | null }): string {
  const why = result.status === 'working' ? result.protocol : result.error;
  return `${result.proxy}: ${result.status}${why ? ` (${why})` : ''}`;
}

export async function proxyRoutes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  app.post(
    '/proxy/check',
    { config: { probe: true }, schema: { summary: 'Check one proxy: protocol, anonymity, SSL, speed, location', tags: ['proxy'], body: ProxyCheckBody, response: responses(ProxyCheckResult) } },
    async (request, reply) => {
      const body = request.body as Static<typeof ProxyCheckBody>;
      const result = await deps.proxy.check(body.proxy, flagsOf(body), clientGoneSignal(reply));
      return ok(result, checkMessage(result));
    },
  );
  app.post(
    '/proxy/check-bulk',
    { config: { probe: true }, schema: { summary: 'Check up to 100 proxies at once', tags: ['proxy'], body: ProxyBulkBody, response: responses(Type.Array(ProxyCheckResult)) } },
    async (request, reply) => {
      const body = request.body as Static<typeof ProxyBulkBody>;
      const results = await deps.proxy.checkBulk(body.proxies, flagsOf(body), clientGoneSignal(reply));
      const working = results.filter((r) => r.status === 'working').length;
      return ok(results, `${results.length} proxies checked, ${working} working`);
    },
  );
}
