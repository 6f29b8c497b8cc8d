import { dateField, isObj, ms, str, yesNo, type Block, type Field, type Json, type Obj, type ResultView } from '../shared/view.js';
import { labelOf } from '../shared/words.js';

function proxyBlocks(result: Json): Block[] {
  if (!isObj(result)) return [];
  const loc = isObj(result.location) ? result.location : null;
  const speed = isObj(result.speed) ? result.speed : null;
  const fields: Field[] = [
    { label: 'Proxy', value: str(result.proxy) },
    { label: 'Verdict', value: str(result.status), tone: result.status === 'working' ? 'ok' : 'bad' },
    { label: 'Protocol', value: str(result.protocol) },
    { label: 'Round trip', value: ms(result.response_time) },
  ];
  if ('anonymity_level' in result) fields.push({ label: 'Anonymity', value: str(result.anonymity_level ?? 'not judged') });
  if ('ssl_support' in result) fields.push({ label: 'TLS through it', value: yesNo(result.ssl_support, 'not known') });
  fields.push({ label: 'Exit address', value: str(result.exit_ip) });
  if (loc) fields.push({ label: 'Exit location', value: [loc.city, loc.country, loc.isp].filter((v) => typeof v === 'string').join(', ') || 'unknown' });
  if (speed) fields.push({ label: 'Speed', value: `down ${str(speed.download)}, up ${str(speed.upload)}, latency ${str(speed.latency)}` });
  if (result.error) fields.push({ label: 'Error', value: str(result.error), tone: 'bad' });
  if (result.checked_at) fields.push(dateField('Checked', result.checked_at, Date.parse(String(result.checked_at))));
  const checks = isObj(result.checks) ? result.checks : {};
  const steps = Object.entries(checks).filter((e): e is [string, Obj] => isObj(e[1]));
  return [
    { type: 'fields', title: 'Verdict', fields },
    {
      type: 'table',
      title: 'Checks and timings',
      columns: ['Check', 'Result', 'Time'],
      numeric: [2],
      rows: steps.map(([name, s]) => [{ text: labelOf(name) }, { text: s.error ? `${str(s.status)}: ${str(s.error)}` : str(s.status), tone: s.status === 'ok' ? 'ok' : 'bad' }, { text: ms(s.time) }]),
      more: 0,
    },
  ];
}

export const proxyCheckView: ResultView = { blocks: proxyBlocks };
