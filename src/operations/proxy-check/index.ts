import { parseProxy } from '../../domain/proxy/index.js';
import { checkTarget, defineOperation } from '../operation.js';
import { proxyCheckExamples } from './examples.js';
import { flagsOf } from './flags.js';
import { ProxyCheckBody, ProxyCheckResult } from './schema.js';
import { proxyCheckView } from './view.js';

/**
 * "203.0.113.7:8080: working (socks5)", or with the reason when it is not ("…:user:***: failed
 * (refused our credentials (HTTP 407))"): the message answers what a caller reads it for.
 * `proxy` is the input with its password already replaced by ***.
 */
function checkMessage(result: { proxy: string; status: string; protocol: string | null; error: string | null }): string {
  const why = result.status === 'working' ? result.protocol : result.error;
  return `${result.proxy}: ${result.status}${why ? ` (${why})` : ''}`;
}

export const proxyCheck = defineOperation({
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
  examples: proxyCheckExamples,
  view: proxyCheckView,
});
