import { Type } from 'typebox';
import { countStates, normalizePorts, PRESETS, RANGE_DEFAULT_TIMEOUT_S, SCAN_DEFAULT_TIMEOUT_S, type PortResult } from '../domain/ports/index.js';
import { checkTarget, defineOperation, type OperationDeps } from './operation.js';
import { PortScanBody, PortScanCommonBody, PortScanItem, PortScanRangeBody } from '../http/schemas/ports.js';

/** "example.com (93.184.216.34)", or why there is no address. Every result of a scan shares both. */
function target(first: PortResult): string {
  return first.ip === null ? `${first.host} did not resolve: ${first.reason}` : `${first.host} (${first.ip})`;
}

function rangeMessage(results: readonly PortResult[]): string {
  const first = results[0]!;
  return first.ip === null ? target(first) : `${results.length} ports of ${target(first)}: ${countStates(results)}`;
}

const checkHost = (deps: OperationDeps, host: string) => checkTarget(deps.dialer, host, { field: 'host' });

export const portOperations = [
  defineOperation({
    path: '/port/scan',
    summary: 'TCP connect scan of one port',
    tags: ['ports'],
    body: PortScanBody,
    data: PortScanItem,
    probe: true,
    precheck: (deps, { host }) => checkHost(deps, host),
    async run(deps, { host, port, timeout = SCAN_DEFAULT_TIMEOUT_S }, { signal }) {
      const result = await deps.ports.scanPort(host, port, { timeoutMs: timeout * 1000, signal });
      return { data: result, message: result.ip === null ? target(result) : `port ${port} of ${target(result)}: ${result.state}` };
    },
  }),
  defineOperation({
    path: '/port/scan-range',
    summary: 'TCP connect scan of up to 1000 ports',
    tags: ['ports'],
    body: PortScanRangeBody,
    data: Type.Array(PortScanItem),
    probe: true,
    items: ({ ports }) => normalizePorts(ports).length,
    async precheck(deps, { host, ports }) {
      normalizePorts(ports);
      await checkHost(deps, host);
    },
    async run(deps, { host, ports, timeout = RANGE_DEFAULT_TIMEOUT_S }, { signal, onItem }) {
      const results = await deps.ports.scanPorts(host, ports, { timeoutMs: timeout * 1000, signal, onItem });
      return { data: results, message: rangeMessage(results) };
    },
  }),
  defineOperation({
    path: '/port/scan-common',
    summary: 'TCP connect scan of a preset port group',
    tags: ['ports'],
    body: PortScanCommonBody,
    data: Type.Array(PortScanItem),
    probe: true,
    items: ({ preset }) => normalizePorts(PRESETS[preset]).length,
    precheck: (deps, { host }) => checkHost(deps, host),
    async run(deps, { host, preset, timeout = RANGE_DEFAULT_TIMEOUT_S }, { signal, onItem }) {
      const results = await deps.ports.scanPorts(host, PRESETS[preset], { timeoutMs: timeout * 1000, signal, onItem });
      return { data: results, message: `${preset}: ${rangeMessage(results)}` };
    },
  }),
];
