import { parseCheckUrl } from '../../domain/checks/index.js';
import { hostOf } from '../../lib/url.js';
import { checkTarget, defineOperation } from '../operation.js';
import { httpCheckExamples } from './examples.js';
import { HttpCheckBody, HttpCheckResult } from './schema.js';
import { httpCheckView } from './view.js';

export const httpCheck = defineOperation({
  path: '/http/check',
  summary: 'HTTP(S) request with redirects, timings, headers and a body digest',
  tags: ['checks'],
  body: HttpCheckBody,
  data: HttpCheckResult,
  probe: true,
  // The first hop's target: a forbidden one is a 403 before anything is sent (redirects are judged as they come).
  precheck: (deps, { url }) => checkTarget(deps.dialer, hostOf(parseCheckUrl(url)), { field: 'url' }),
  async run(deps, body, { signal }) {
    const r = await deps.checks.http(body, signal);
    const hops = r.redirects.length > 0 ? ` after ${r.redirects.length} redirect${r.redirects.length === 1 ? '' : 's'}` : '';
    return { data: r, message: r.error !== null ? `${r.final_url}: ${r.error}` : `${r.final_url}: HTTP ${r.status}${hops}` };
  },
  examples: httpCheckExamples,
  view: httpCheckView,
});
