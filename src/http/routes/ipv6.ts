import type { FastifyInstance } from 'fastify';
import { clientGoneSignal } from '../client-gone.js';
import type { Static } from 'typebox';
import { expand, testConnectivity, validate } from '../../domain/ipv6/index.js';
import { ok } from '../reply.js';
import { responses } from '../schemas/common.js';
import { Ipv6Body, Ipv6Expansion, Ipv6ValidateBody, Ipv6TestBody, Ipv6TestResult, Ipv6Validation } from '../schemas/ipv6.js';
import type { RouteDeps } from './deps.js';

export async function ipv6Routes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  app.post(
    '/ipv6/validate',
    { schema: { summary: 'Validate IPv6 address format', tags: ['ipv6'], body: Ipv6ValidateBody, response: responses(Ipv6Validation) } },
    async (request) => {
      const result = validate((request.body as Static<typeof Ipv6ValidateBody>).ipv6);
      return ok(result, result.valid ? 'valid IPv6 address' : 'not a valid IPv6 address');
    },
  );
  app.post(
    '/ipv6/expand',
    { schema: { summary: 'Expand an IPv6 address to full notation', tags: ['ipv6'], body: Ipv6Body, response: responses(Ipv6Expansion) } },
    async (request) => ok(expand((request.body as Static<typeof Ipv6Body>).ipv6), 'address expanded'),
  );
  app.post(
    '/ipv6/test',
    { config: { probe: true }, schema: { summary: 'Test IPv6 connectivity to a target (TCP 443, then 80)', tags: ['ipv6'], body: Ipv6TestBody, response: responses(Ipv6TestResult) } },
    async (request, reply) => {
      const { target, port } = request.body as Static<typeof Ipv6TestBody>;
      // A client that hangs up stops the connects (each may wait up to 5 s); recorded as 499.
      const result = await testConnectivity({ dialer: deps.dialer }, target, port, { signal: clientGoneSignal(reply) });
      return ok(result, result.reachable ? `reachable over IPv6 on port ${result.port}` : 'not reachable over IPv6');
    },
  );
}
