import { isObj, ms, str, type Block, type Cell, type Json, type ResultView } from '../shared/view.js';

/** A hop's network as a person reads it: "AS64500 EXAMPLE-NET (198.51.100.0/24)". */
export function hopNetwork(hop: Record<string, Json>): string {
  if (typeof hop.asn !== 'number') return '—';
  return `AS${hop.asn}${hop.organization ? ` ${str(hop.organization)}` : ''}${hop.network ? ` (${str(hop.network)})` : ''}`;
}

/** The hop columns every path view starts with: the hop, who answered, its name and network. */
export function hopCells(hop: Record<string, Json>): Cell[] {
  return [
    { text: str(hop.ttl) },
    hop.address === null ? { text: 'no answer', tone: 'muted' } : { text: str(hop.address), code: true },
    { text: hop.hostname === null ? '—' : str(hop.hostname) },
    { text: hopNetwork(hop) },
  ];
}

export function pathTarget(result: Record<string, Json>): string {
  return `${str(result.target)}${result.address && result.address !== result.target ? ` (${str(result.address)})` : ''} over ${str(result.protocol).toUpperCase()}`;
}

function tracerouteBlocks(result: Json): Block[] {
  if (!isObj(result)) return [];
  const hops = (Array.isArray(result.hops) ? result.hops : []).filter(isObj);
  const blocks: Block[] = [
    {
      type: 'fields',
      title: 'Summary',
      fields: [
        { label: 'Target', value: pathTarget(result) },
        { label: 'Reached', value: result.reached === true ? `yes, in ${hops.length} hop${hops.length === 1 ? '' : 's'}` : 'no', tone: result.reached === true ? 'ok' : 'bad' },
        ...(result.error ? [{ label: 'Error', value: str(result.error), tone: 'bad' as const }] : []),
      ],
    },
  ];
  if (hops.length) {
    blocks.push({
      type: 'table',
      title: `Hops (${hops.length})`,
      columns: ['Hop', 'Address', 'Name', 'Network', 'Round trips'],
      numeric: [0],
      rows: hops.map((h) => [...hopCells(h), { text: (Array.isArray(h.rtts) ? h.rtts : []).map((r) => (r === null ? '*' : ms(r))).join(', ') }]),
      more: 0,
    });
  }
  return blocks;
}

export const tracerouteView: ResultView = { blocks: tracerouteBlocks };
