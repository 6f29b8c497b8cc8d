import { expand, testConnectivity, validate } from '../domain/ipv6/index.js';
import { checkTarget, defineOperation } from './operation.js';
import { Ipv6Body, Ipv6Expansion, Ipv6ValidateBody, Ipv6TestBody, Ipv6TestResult, Ipv6Validation } from '../http/schemas/ipv6.js';

export const ipv6Operations = [
  defineOperation({
    path: '/ipv6/validate',
    summary: 'Validate IPv6 address format',
    tags: ['ipv6'],
    body: Ipv6ValidateBody,
    data: Ipv6Validation,
    probe: false,
    async run(_deps, { ipv6 }) {
      const result = validate(ipv6);
      return { data: result, message: result.valid ? 'valid IPv6 address' : 'not a valid IPv6 address' };
    },
  }),
  defineOperation({
    path: '/ipv6/expand',
    summary: 'Expand an IPv6 address to full notation',
    tags: ['ipv6'],
    body: Ipv6Body,
    data: Ipv6Expansion,
    probe: false,
    precheck(_deps, { ipv6 }) {
      expand(ipv6);
    },
    async run(_deps, { ipv6 }) {
      return { data: expand(ipv6), message: 'address expanded' };
    },
  }),
  defineOperation({
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
  }),
];
