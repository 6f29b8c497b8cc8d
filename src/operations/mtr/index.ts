import { PATH_DEFAULT_MAX_HOPS } from '../../domain/path/index.js';
import { defineOperation } from '../operation.js';
import { mtrExamples } from './examples.js';
import { MtrBody, MtrHop, MtrResult } from './schema.js';
import { mtrView } from './view.js';

export const mtr = defineOperation({
  path: '/mtr',
  summary: "mtr: loss and round-trip times at every hop to a host, mtr's report",
  tags: ['path'],
  body: MtrBody,
  data: MtrResult,
  item: MtrHop,
  probe: true,
  // A job's items are its hops, told once mtr's report is in (mtr prints nothing before).
  items: ({ max_hops }) => max_hops ?? PATH_DEFAULT_MAX_HOPS,
  itemsAtMost: true,
  precheck: (deps, { target, ...opts }) => deps.path.precheck('mtr', target, opts),
  async run(deps, { target, ...opts }, { signal, onItem }) {
    const r = await deps.path.mtr(target, opts, { signal, onItem });
    const last = r.hops.at(-1);
    const message =
      r.address === null || last === undefined
        ? `${r.target}: ${r.error ?? 'nothing sent'}`
        : `${r.target} (${r.address}): ${r.hops.length} hop${r.hops.length === 1 ? '' : 's'}, ${last.loss_percent}% loss at the last`;
    return { data: r, message };
  },
  examples: mtrExamples,
  view: mtrView,
});
