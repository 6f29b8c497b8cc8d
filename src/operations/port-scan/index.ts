import { SCAN_DEFAULT_TIMEOUT_S } from '../../domain/ports/index.js';
import { defineOperation } from '../operation.js';
import { portScanExamples } from './examples.js';
import { checkHost, target } from './messages.js';
import { PortScanBody, PortScanItem } from './schema.js';
import { portsView } from './view.js';

export const portScan = defineOperation({
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
  examples: portScanExamples,
  view: portsView,
});
