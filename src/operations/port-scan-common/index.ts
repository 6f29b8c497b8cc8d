import { Type } from 'typebox';
import { normalizePorts, PRESETS, RANGE_DEFAULT_TIMEOUT_S, tallyOf } from '../../domain/ports/index.js';
import { defineOperation } from '../operation.js';
import { checkHost, tallyMessage } from '../port-scan/messages.js';
import { PortScanItem } from '../port-scan/schema.js';
import { portsView } from '../port-scan/view.js';
import { portScanCommonExamples } from './examples.js';
import { PortScanCommonBody } from './schema.js';

export const portScanCommon = defineOperation({
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
  examples: portScanCommonExamples,
  view: portsView,
});
