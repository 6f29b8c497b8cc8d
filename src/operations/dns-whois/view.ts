import { dateField, isObj, ms, str, yesNo, type Block, type Field, type Json, type ResultView } from '../shared/view.js';
import { labelOf } from '../shared/words.js';

function whoisBlocks(result: Json, now: number): Block[] {
  if (!isObj(result)) return [];
  const blocks: Block[] = [];
  const fields: Field[] = [
    { label: 'Domain', value: str(result.domain) },
    { label: 'Registered', value: yesNo(result.registered), tone: result.registered === true ? 'ok' : 'muted' },
  ];
  for (const key of ['registrar', 'registrar_url', 'whois_server', 'rdap_server', 'source']) {
    if (key in result && result[key] !== null) fields.push({ label: labelOf(key), value: str(result[key]) });
  }
  for (const key of Object.keys(result)) if (key.endsWith('_date')) fields.push(dateField(labelOf(key.slice(0, -5)), result[key], now));
  if ('dnssec' in result) fields.push({ label: 'DNSSEC', value: yesNo(result.dnssec) });
  if (result.error) fields.push({ label: 'Error', value: str(result.error), tone: 'bad' });
  blocks.push({ type: 'fields', title: 'Registration', fields });
  for (const key of ['name_servers', 'status']) {
    const list = result[key];
    if (Array.isArray(list) && list.length) blocks.push({ type: 'list', title: key === 'status' ? 'Status (EPP)' : 'Name servers', items: list.map(str) });
  }
  const hops = Array.isArray(result.hops) ? result.hops.filter(isObj) : [];
  if (hops.length) {
    blocks.push({
      type: 'table',
      title: 'Servers asked',
      columns: ['Server', 'Status', 'Bytes', 'Time'],
      numeric: [2, 3],
      rows: hops.map((h) => [{ text: str(h.server), code: true }, { text: h.error ? `${str(h.status)}: ${str(h.error)}` : str(h.status), tone: h.status === 'ok' ? 'ok' : 'bad' }, { text: str(h.bytes) }, { text: ms(h.response_time) }]),
      more: 0,
    });
  }
  if (typeof result.raw === 'string' && result.raw !== '') blocks.push({ type: 'text', title: 'Raw answer', text: result.raw });
  return blocks;
}

export const dnsWhoisView: ResultView = { blocks: whoisBlocks };
