import { Type, type Static } from 'typebox';
import { parseProxy, type CheckFlags } from '../domain/proxy/index.js';
import { checkTarget, defineOperation } from './operation.js';
import { ProxyBulkBody, ProxyBulkItem, ProxyCheckBody, ProxyCheckResult } from '../http/schemas/proxy.js';

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


export const proxyOperations = [
  defineOperation({
    path: '/proxy/check',
    summary: 'Check one proxy: protocol, anonymity, SSL, speed, location',
    tags: ['proxy'],
    body: ProxyCheckBody,
    data: ProxyCheckResult,
    probe: true,
    // The proxy parsed and its host resolved and checked, as the check does before any packet.
    precheck: (deps, { proxy }) => checkTarget(deps.dialer, parseProxy(proxy, 'proxy').host, { field: 'proxy' }),
    async run(deps, body, { signal }) {
      const result = await deps.proxy.check(body.proxy, flagsOf(body), signal);
      return { data: result, message: checkMessage(result) };
    },
  }),
  defineOperation({
    path: '/proxy/check-bulk',
    summary: 'Check up to 100 proxies at once',
    tags: ['proxy'],
    body: ProxyBulkBody,
    data: Type.Array(ProxyBulkItem),
    probe: true,
    items: ({ proxies }) => proxies.length,
    // No precheck: a bad or forbidden entry is an item of the result, never the job's 400 or 403.
    skipsDone: true,
    async run(deps, body, { signal, onItem, done }) {
      // A job run again: the entries it stored are not checked again (their places stay empty).
      const answered = await deps.proxy.checkBulk(body.proxies, flagsOf(body), signal, onItem, done);
      const results = answered.filter((r): r is NonNullable<typeof r> => r !== undefined);
      const working = results.filter((r) => r.status === 'working').length;
      const refused = results.filter((r) => 'error_code' in r).length;
      return { data: done === undefined ? results : answered, message: `${results.length} proxies checked, ${working} working${refused ? `, ${refused} refused (invalid or forbidden)` : ''}` };
    },
  }),
];
