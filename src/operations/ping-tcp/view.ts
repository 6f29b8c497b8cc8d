import { isObj, ms, roundTripField, str, type Block, type Json, type ResultView } from '../shared/view.js';

function tcpPingBlocks(result: Json): Block[] {
  if (!isObj(result)) return [];
  const samples = Array.isArray(result.samples) ? result.samples : [];
  const outcomes = Array.isArray(result.outcomes) ? result.outcomes : [];
  const loss = Number(result.loss_percent);
  const blocks: Block[] = [
    {
      type: 'fields',
      title: 'Summary',
      fields: [
        { label: 'Target', value: `${str(result.host)} port ${str(result.port)}${result.ip ? ` (${str(result.ip)})` : ''}` },
        { label: 'Handshakes', value: `${str(result.received)} of ${str(result.sent)} (${str(result.loss_percent)} % lost)`, tone: loss === 0 ? 'ok' : 'bad' },
        roundTripField(result),
        ...(result.error ? [{ label: 'Error', value: str(result.error), tone: 'bad' as const }] : []),
      ],
    },
  ];
  if (samples.length) {
    blocks.push({
      type: 'table',
      title: `Probes (${samples.length})`,
      columns: ['Probe', 'Outcome', 'Handshake'],
      numeric: [0, 2],
      rows: samples.map((v, i) => [{ text: String(i + 1) }, { text: str(outcomes[i]), tone: outcomes[i] === 'connected' ? 'ok' : 'bad' }, { text: v === null ? 'lost' : ms(v) }]),
      more: 0,
    });
  }
  return blocks;
}

export const pingTcpView: ResultView = { blocks: tcpPingBlocks };
