import { PATH_DEFAULT_MAX_HOPS } from '../../domain/path/index.js';
import { defineOperation } from '../operation.js';
import { tracerouteExamples } from './examples.js';
import { TracerouteBody, TracerouteHop, TracerouteResult } from './schema.js';
import { tracerouteView } from './view.js';

export const traceroute = defineOperation({
  path: '/traceroute',
  summary: 'Traceroute: every router on the way to a host, with its name, network and round-trip times',
  tags: ['path'],
  body: TracerouteBody,
  data: TracerouteResult,
  item: TracerouteHop,
  probe: true,
  // A job's items are its hops, each once traceroute printed it (at most max_hops).
  items: ({ max_hops }) => max_hops ?? PATH_DEFAULT_MAX_HOPS,
  itemsAtMost: true,
  precheck: (deps, { target, ...opts }) => deps.path.precheck('traceroute', target, opts),
  async run(deps, { target, ...opts }, { signal, onItem }) {
    const r = await deps.path.traceroute(target, opts, { signal, onItem });
    const message =
      r.address === null
        ? `${r.target}: ${r.error ?? 'nothing sent'}`
        : `${r.target} (${r.address}) ${r.reached ? 'reached' : 'not reached'} in ${r.hops.length} hop${r.hops.length === 1 ? '' : 's'}${r.error ? `: ${r.error}` : ''}`;
    return { data: r, message };
  },
  examples: tracerouteExamples,
  view: tracerouteView,
});
