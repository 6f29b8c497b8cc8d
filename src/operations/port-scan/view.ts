import { TABLE_ROWS_MAX, isObj, ms, str, type Block, type Json, type ResultView } from '../shared/view.js';

/** `total`: the items of the whole result when `result` is only its first ones (a job page's part). */
function portsBlocks(result: Json, _now: number, total?: number): Block[] {
  const items = (Array.isArray(result) ? result : [result]).filter(isObj);
  if (items.length === 0) return [];
  const first = items[0]!;
  const part = total !== undefined && total > items.length;
  const counts = { open: 0, closed: 0, filtered: 0, unresolved: 0 } as Record<string, number>;
  for (const p of items) counts[String(p.state)] = (counts[String(p.state)] ?? 0) + 1;
  const blocks: Block[] = [
    {
      type: 'fields',
      title: 'Target',
      fields: [
        { label: 'Host', value: str(first.host) },
        { label: 'Address', value: first.ip === null ? `did not resolve: ${str(first.error ?? first.reason)}` : str(first.ip), ...(first.ip === null ? { tone: 'bad' as const } : {}) },
        first.ip === null
          ? { label: 'Ports', value: `none scanned (${total ?? items.length} asked): no address to send to` }
          : {
              label: 'Ports',
              value: `${part ? `${total} scanned; of the first ${items.length}` : `${items.length} scanned`}: ${counts.open} open, ${counts.closed} closed, ${counts.filtered} filtered`,
            },
      ],
    },
  ];
  // A name that does not resolve: every item says so; the page says it once.
  if (first.ip === null) return blocks;
  const open = items.filter((p) => p.state === 'open');
  blocks.push({
    type: 'table',
    title: `${open.length ? `Open ports (${open.length})` : 'Open ports: none'}${part ? ` among the first ${items.length}` : ''}`,
    columns: ['Port', 'Service', 'State', 'Answered in'],
    numeric: [0, 3],
    rows: open.slice(0, TABLE_ROWS_MAX).map((p) => [{ text: str(p.port) }, { text: p.service === null ? 'unknown' : str(p.service) }, { text: 'open', tone: 'ok' }, { text: ms(p.response_time) }]),
    more: Math.max(0, open.length - TABLE_ROWS_MAX),
  });
  if (items.length > 1) {
    blocks.push({
      type: 'ports',
      title: part ? `The first ${items.length} ports` : `Every port (${items.length})`,
      ports: items.map((p) => ({ port: Number(p.port), state: String(p.state), service: p.service === null ? '' : str(p.service) })),
    });
  } else if (first.state !== 'open') {
    blocks.push({ type: 'fields', title: `Port ${str(first.port)}`, fields: [{ label: 'State', value: `${str(first.state)}: ${str(first.reason)}`, tone: 'bad' }] });
  }
  return blocks;
}

/** The view of the three port scans: one port, a range, a preset. */
export const portsView: ResultView = { blocks: portsBlocks, items: 'ports' };
