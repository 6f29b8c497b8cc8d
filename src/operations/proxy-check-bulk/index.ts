import { Type } from 'typebox';
import { defineOperation } from '../operation.js';
import { flagsOf } from '../proxy-check/flags.js';
import { proxyCheckBulkExamples } from './examples.js';
import { ProxyBulkBody, ProxyBulkItem } from './schema.js';
import { proxyCheckBulkView } from './view.js';

export const proxyCheckBulk = defineOperation({
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
  examples: proxyCheckBulkExamples,
  view: proxyCheckBulkView,
});
