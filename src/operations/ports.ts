import { Type } from 'typebox';
import {
  MAX_PORTS_PER_JOB,
  MAX_PORTS_PER_SCAN,
  normalizePorts,
  PRESETS,
  RANGE_DEFAULT_TIMEOUT_S,
  SCAN_DEFAULT_TIMEOUT_S,
  type PortResult,
  tallyOf,
  type ScanTally,
} from '../domain/ports/index.js';
import { checkTarget, defineOperation, ITEMS_REPORTED, type OperationDeps } from './operation.js';
import { PortScanBody, PortScanCommonBody, PortScanItem, PortScanRangeBody } from '../http/schemas/ports.js';

/** "example.com (93.184.216.34)", or why there is no address. Every result of a scan shares both. */
function target(first: PortResult): string {
  return first.ip === null ? `${first.host} did not resolve: ${first.reason}` : `${first.host} (${first.ip})`;
}

/** "1000 ports of example.com (93.184.216.34): 3 open, 995 closed, 2 filtered". */
function tallyMessage(tally: ScanTally): string {
  const first = tally.first;
  // A job run again that had stored its first port: the message is not a job's business.
  if (first === null) return `${tally.ports} ports`;
  return first.ip === null ? target(first) : `${tally.ports} ports of ${target(first)}: ${tally.open} open, ${tally.closed} closed, ${tally.filtered} filtered`;
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
    summary: `TCP connect scan of up to ${MAX_PORTS_PER_SCAN} ports (${MAX_PORTS_PER_JOB} as a job)`,
    tags: ['ports'],
    body: PortScanRangeBody,
    data: Type.Array(PortScanItem),
    probe: true,
    bounds: { sync: MAX_PORTS_PER_SCAN, job: MAX_PORTS_PER_JOB, noun: 'ports' },
    items: ({ ports }, max) => normalizePorts(ports, 'ports', max).length,
    skipsDone: true,
    precheck: (deps, { host }) => checkHost(deps, host),
    async run(deps, { host, ports, timeout = RANGE_DEFAULT_TIMEOUT_S }, { signal, onItem, maxItems, done }) {
      const opts = { timeoutMs: timeout * 1000, signal, maxPorts: maxItems, skip: done };
      if (onItem) {
        // A job: every result goes to the job as it completes and none is kept here (up to 65535).
        const tally = await deps.ports.scanPortsEach(host, ports, { ...opts, onItem });
        return { data: ITEMS_REPORTED, message: tallyMessage(tally) };
      }
      const results = await deps.ports.scanPorts(host, ports, opts);
      return { data: results, message: tallyMessage(tallyOf(results)) };
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
    skipsDone: true,
    precheck: (deps, { host }) => checkHost(deps, host),
    async run(deps, { host, preset, timeout = RANGE_DEFAULT_TIMEOUT_S }, { signal, onItem, done }) {
      const results = await deps.ports.scanPorts(host, PRESETS[preset], { timeoutMs: timeout * 1000, signal, onItem, skip: done });
      return { data: results, message: `${preset}: ${tallyMessage(tallyOf(results))}` };
    },
  }),
];
