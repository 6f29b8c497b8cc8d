import { TABLE_ROWS_MAX, isObj, ms, str, type Block, type Json, type Obj, type ResultView } from '../shared/view.js';

/** A record's data as dig prints it, per type. */
export function recordData(r: Obj): string {
  switch (r.type) {
    case 'A':
    case 'AAAA':
      return str(r.address);
    case 'MX':
      return `${str(r.priority)} ${str(r.exchange)}`;
    case 'SOA':
      return `${str(r.nsname)} ${str(r.hostmaster)} serial ${str(r.serial)}, refresh ${str(r.refresh)} s, retry ${str(r.retry)} s, expire ${str(r.expire)} s, min TTL ${str(r.minttl)} s`;
    case 'SRV':
      return `${str(r.priority)} ${str(r.weight)} ${str(r.port)} ${str(r.target)}`;
    case 'CAA':
      return `${str(r.flags)} ${str(r.tag)} "${str(r.value)}"`;
    default:
      return str(r.value ?? r.address);
  }
}

function dnsBlocks(result: Json): Block[] {
  if (!isObj(result)) return [];
  const records = Array.isArray(result.records) ? result.records.filter(isObj) : [];
  return [
    {
      type: 'fields',
      title: 'Answer',
      fields: [
        { label: 'Name', value: str(result.domain) },
        { label: 'Type', value: str(result.type) },
        { label: 'Status', value: str(result.status), tone: result.status === 'NOERROR' ? 'ok' : 'bad' },
        { label: 'Resolver', value: str(result.resolver) },
        { label: 'Answered in', value: `${ms(result.response_time)}${result.cached === true ? ' (from the cache)' : ''}` },
      ],
    },
    {
      type: 'table',
      title: records.length ? `Records (${records.length})` : 'Records: none',
      columns: ['Type', 'TTL', 'Data'],
      numeric: [1],
      rows: records.slice(0, TABLE_ROWS_MAX).map((r) => [{ text: str(r.type) }, { text: `${str(r.ttl)} s` }, { text: recordData(r), code: true }]),
      more: Math.max(0, records.length - TABLE_ROWS_MAX),
    },
  ];
}

export const dnsLookupView: ResultView = { blocks: dnsBlocks };
