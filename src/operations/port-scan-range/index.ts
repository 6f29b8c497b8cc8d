import { Type } from 'typebox';
import { MAX_PORTS_PER_JOB, MAX_PORTS_PER_SCAN, normalizePorts, RANGE_DEFAULT_TIMEOUT_S, tallyOf } from '../../domain/ports/index.js';
import { defineOperation, ITEMS_REPORTED } from '../operation.js';
import { checkHost, tallyMessage } from '../port-scan/messages.js';
import { PortScanItem } from '../port-scan/schema.js';
import { portsView } from '../port-scan/view.js';
import { portScanRangeExamples } from './examples.js';
import { PortScanRangeBody } from './schema.js';

export const portScanRange = defineOperation({
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
  examples: portScanRangeExamples,
  view: portsView,
});
