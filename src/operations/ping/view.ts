import { isObj, ms, roundTripField, str, type Block, type Json, type ResultView } from '../shared/view.js';

function pingBlocks(result: Json): Block[] {
  if (!isObj(result)) return [];
  const samples = Array.isArray(result.samples) ? result.samples : [];
  const loss = Number(result.loss_percent);
  const blocks: Block[] = [
    {
      type: 'fields',
      title: 'Summary',
      fields: [
        { label: 'Target', value: `${str(result.target)}${result.address && result.address !== result.target ? ` (${str(result.address)})` : ''}` },
        { label: 'Replies', value: `${str(result.received)} of ${str(result.sent)} (${str(result.loss_percent)} % lost)`, tone: loss === 0 ? 'ok' : 'bad' },
        roundTripField(result),
        ...(result.error ? [{ label: 'Error', value: str(result.error), tone: 'bad' as const }] : []),
      ],
    },
  ];
  if (samples.length) {
    blocks.push({
      type: 'table',
      title: `Echo requests (${samples.length})`,
      columns: ['Request', 'Reply', 'TTL'],
      numeric: [0, 1, 2],
      rows: samples.map((s, i) =>
        isObj(s) ? [{ text: String(i + 1) }, { text: ms(s.rtt), tone: 'ok' as const }, { text: str(s.ttl) }] : [{ text: String(i + 1) }, { text: 'lost', tone: 'bad' as const }, { text: '—' }],
      ),
      more: 0,
    });
  }
  return blocks;
}

export const pingView: ResultView = { blocks: pingBlocks };
