import { DEAD_PROXY, WORKING_PROXY } from '../proxy-check/examples.js';
import { ok, one, type OperationExamples } from '../shared/examples.js';

export const proxyCheckBulkExamples: OperationExamples = {
  body: one('two proxies and a private one', { proxies: ['203.0.113.7:8080:user:pass', 'socks5://198.51.100.4:1080', '10.0.0.5:3128'] }),
  ok: ok(
    [
      WORKING_PROXY,
      DEAD_PROXY,
      {
        ...DEAD_PROXY,
        proxy: '10.0.0.5:3128',
        host: '10.0.0.5',
        port: 3128,
        status: 'failed',
        error: 'proxies[2]: target 10.0.0.5 resolves to 10.0.0.5, which is in the blocked private range 10.0.0.0/8',
        error_code: 'target_forbidden',
        checks: {
          protocol: { status: 'failed', error: 'proxies[2]: target 10.0.0.5 resolves to 10.0.0.5, which is in the blocked private range 10.0.0.0/8', time: 0, tried: [] },
        },
      },
    ],
    '3 proxies checked, 1 working, 1 refused (invalid or forbidden)',
  ),
  invalid: { field: 'proxies', message: 'proxies: at most 100 entries' },
};
