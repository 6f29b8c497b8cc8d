import { checkTarget, defineOperation } from '../operation.js';
import { pingTcpExamples } from './examples.js';
import { TcpPingBody, TcpPingResult } from './schema.js';
import { pingTcpView } from './view.js';

export const pingTcp = defineOperation({
  path: '/ping/tcp',
  summary: 'TCP ping: handshake times of a few connects to one port, as ping reports them',
  tags: ['ping'],
  body: TcpPingBody,
  data: TcpPingResult,
  probe: true,
  precheck: (deps, { host }) => checkTarget(deps.dialer, host, { field: 'host' }),
  async run(deps, { host, ...opts }, { signal }) {
    const r = await deps.ping.ping(host, { ...opts, signal });
    const message =
      r.ip === null
        ? `${r.host} did not resolve: ${r.error}`
        : `${r.host} (${r.ip}) port ${r.port}: ${r.sent} sent, ${r.received} received, ${r.loss_percent}% loss`;
    return { data: r, message };
  },
  examples: pingTcpExamples,
  view: pingTcpView,
});
