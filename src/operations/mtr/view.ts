import { isObj, ms, str, type Block, type Json, type ResultView } from '../shared/view.js';
import { hopCells, pathTarget } from '../traceroute/view.js';

function mtrBlocks(result: Json): Block[] {
  if (!isObj(result)) return [];
  const hops = (Array.isArray(result.hops) ? result.hops : []).filter(isObj);
  const blocks: Block[] = [
    {
      type: 'fields',
      title: 'Summary',
      fields: [{ label: 'Target', value: pathTarget(result) }, ...(result.error ? [{ label: 'Error', value: str(result.error), tone: 'bad' as const }] : [])],
    },
  ];
  if (hops.length) {
    blocks.push({
      type: 'table',
      title: `Hops (${hops.length})`,
      columns: ['Hop', 'Address', 'Name', 'Network', 'Loss', 'Sent', 'Last', 'Best', 'Average', 'Worst', 'Deviation'],
      numeric: [0, 4, 5, 6, 7, 8, 9, 10],
      rows: hops.map((h) => [
        ...hopCells(h),
        { text: `${str(h.loss_percent)} %`, tone: h.loss_percent === 0 ? 'ok' : 'bad' },
        { text: str(h.sent) },
        { text: ms(h.last) },
        { text: ms(h.best) },
        { text: ms(h.avg) },
        { text: ms(h.worst) },
        { text: ms(h.stdev) },
      ]),
      more: 0,
    });
  }
  return blocks;
}

export const mtrView: ResultView = { blocks: mtrBlocks };
