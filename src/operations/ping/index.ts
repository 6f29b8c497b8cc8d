import { PING_DEFAULT_PACKETS } from '../../domain/path/index.js';
import { defineOperation } from '../operation.js';
import { pingExamples } from './examples.js';
import { IcmpPingBody, IcmpPingResult, PingSample } from './schema.js';
import { pingView } from './view.js';

export const ping = defineOperation({
  path: '/ping',
  summary: 'ICMP ping: echo requests to a host, with loss and round-trip times',
  tags: ['path'],
  body: IcmpPingBody,
  data: IcmpPingResult,
  item: PingSample,
  probe: true,
  // A job's items are its samples, as their replies arrive (the lost ones when ping ends).
  items: ({ packets }) => packets ?? PING_DEFAULT_PACKETS,
  precheck: (deps, { target, ...opts }) => deps.path.precheck('ping', target, opts),
  async run(deps, { target, ...opts }, { signal, onItem }) {
    const r = await deps.path.ping(target, opts, { signal, onItem });
    const message =
      r.address === null || r.error !== null
        ? `${r.target}: ${r.error ?? 'nothing sent'}`
        : `${r.target} (${r.address}): ${r.sent} sent, ${r.received} received, ${r.loss_percent}% loss`;
    return { data: r, message };
  },
  examples: pingExamples,
  view: pingView,
});
