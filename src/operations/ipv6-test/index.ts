import { testConnectivity } from '../../domain/ipv6/index.js';
import { checkTarget, defineOperation } from '../operation.js';
import { ipv6View } from '../ipv6-validate/view.js';
import { ipv6TestExamples } from './examples.js';
import { Ipv6TestBody, Ipv6TestResult } from './schema.js';

export const ipv6Test = defineOperation({
  path: '/ipv6/test',
  summary: 'Test IPv6 connectivity to a target (TCP 443, then 80)',
  tags: ['ipv6'],
  body: Ipv6TestBody,
  data: Ipv6TestResult,
  probe: true,
  precheck: (deps, { target }) => checkTarget(deps.dialer, target, { field: 'target', family: 6 }),
  async run(deps, { target, port }, { signal }) {
    // A client that hangs up stops the connects (each may wait up to 5 s); recorded as 499.
    const result = await testConnectivity({ dialer: deps.dialer }, target, port, { signal });
    return { data: result, message: result.reachable ? `reachable over IPv6 on port ${result.port}` : 'not reachable over IPv6' };
  },
  examples: ipv6TestExamples,
  view: ipv6View,
});
