import type { FastifyInstance } from 'fastify';
import { Type, type Static } from 'typebox';
import { countStates, PRESETS, RANGE_DEFAULT_TIMEOUT_S, SCAN_DEFAULT_TIMEOUT_S, type PortResult } from '../../domain/ports/index.js';
import { ok } from '../reply.js';
import { responses } from '../schemas/common.js';
import { PortScanBody, PortScanCommonBody, PortScanItem, PortScanRangeBody } from '../schemas/ports.js';
import type { RouteDeps } from './deps.js';
import { clientGoneSignal } from '../client-gone.js';

/** "example.com (93.184.216.34)", or why there is no address. Every result of a scan shares both. */
function target(first: PortResult): string {
  return first.ip === null ? `${first.host} did not resolve: ${first.reason}` : `${first.host} (${first.ip})`;
}

function rangeMessage(results: readonly PortResult[]): string {
  const first = results[0]!;
  return first.ip === null ? target(first) : `${results.length} ports of ${target(first)}: ${countStates(results)}`;
}

export async function portRoutes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  app.post(
    '/port/scan',
    { config: { probe: true }, schema: { summary: 'TCP connect scan of one port', tags: ['ports'], body: PortScanBody, response: responses(PortScanItem) } },
    async (request, reply) => {
      const { host, port, timeout = SCAN_DEFAULT_TIMEOUT_S } = request.body as Static<typeof PortScanBody>;
      const result = await deps.ports.scanPort(host, port, { timeoutMs: timeout * 1000, signal: clientGoneSignal(reply) });
      return ok(result, result.ip === null ? target(result) : `port ${port} of ${target(result)}: ${result.state}`);
    },
  );
  app.post(
    '/port/scan-range',
    { config: { probe: true }, schema: { summary: 'TCP connect scan of up to 1000 ports', tags: ['ports'], body: PortScanRangeBody, response: responses(Type.Array(PortScanItem)) } },
    async (request, reply) => {
      const { host, ports, timeout = RANGE_DEFAULT_TIMEOUT_S } = request.body as Static<typeof PortScanRangeBody>;
      const results = await deps.ports.scanPorts(host, ports, { timeoutMs: timeout * 1000, signal: clientGoneSignal(reply) });
      return ok(results, rangeMessage(results));
    },
  );
  app.post(
    '/port/scan-common',
    { config: { probe: true }, schema: { summary: 'TCP connect scan of a preset port group', tags: ['ports'], body: PortScanCommonBody, response: responses(Type.Array(PortScanItem)) } },
    async (request, reply) => {
      const { host, preset, timeout = RANGE_DEFAULT_TIMEOUT_S } = request.body as Static<typeof PortScanCommonBody>;
      const results = await deps.ports.scanPorts(host, PRESETS[preset], { timeoutMs: timeout * 1000, signal: clientGoneSignal(reply) });
      return ok(results, `${preset}: ${rangeMessage(results)}`);
    },
  );
}
