import { checkTarget, defineOperation } from '../operation.js';
import { tlsCheckExamples } from './examples.js';
import { TlsCheckBody, TlsCheckResult } from './schema.js';
import { tlsCheckView } from './view.js';

export const tlsCheck = defineOperation({
  path: '/tls/check',
  summary: 'TLS handshake and certificate of a host',
  tags: ['checks'],
  body: TlsCheckBody,
  data: TlsCheckResult,
  probe: true,
  precheck: (deps, { host }) => checkTarget(deps.dialer, host, { field: 'host' }),
  async run(deps, body, { signal }) {
    const r = await deps.checks.tls(body, signal);
    const where = `${r.host}:${r.port}`;
    if (r.error !== null) return { data: r, message: `${where}: ${r.error}` };
    const verdict = r.authorized ? 'certificate trusted' : `certificate not trusted (${r.authorization_error})`;
    return { data: r, message: `${where}: ${r.protocol}, ${verdict}` };
  },
  examples: tlsCheckExamples,
  view: tlsCheckView,
});
