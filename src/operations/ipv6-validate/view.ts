import { isObj, ms, str, type Block, type Field, type Json, type ResultView } from '../shared/view.js';

/** The IPv6 tools' results, /ipv6/validate's, /ipv6/expand's and /ipv6/test's, in one view: each shows the fields it has. */
function ipv6Blocks(result: Json): Block[] {
  if (!isObj(result)) return [];
  const fields: Field[] = [{ label: 'Asked', value: str(result.ipv6 ?? result.target) }];
  if ('valid' in result) fields.push({ label: 'An IPv6 address', value: result.valid === true ? 'yes' : `no: ${str(result.reason)}`, tone: result.valid === true ? 'ok' : 'bad' });
  if (typeof result.type === 'string') fields.push({ label: 'Kind', value: result.type.replace(/_/g, ' ') });
  if (typeof result.compressed === 'string') fields.push({ label: 'Short form (RFC 5952)', value: result.compressed });
  if (typeof result.expanded === 'string') fields.push({ label: 'Full form', value: result.expanded });
  if ('reachable' in result) {
    const addresses = Array.isArray(result.addresses) ? result.addresses.map(str) : [];
    fields.push(
      { label: 'IPv6 addresses', value: addresses.length ? addresses.join(', ') : 'none (no AAAA record)' },
      { label: 'Reachable over IPv6', value: result.reachable === true ? `yes, ${str(result.address)} port ${str(result.port)} in ${ms(result.response_time)}` : 'no', tone: result.reachable === true ? 'ok' : 'bad' },
      ...(result.error ? [{ label: 'Error', value: str(result.error), tone: 'bad' as const }] : []),
    );
  }
  return [{ type: 'fields', title: 'IPv6', fields }];
}

export const ipv6View: ResultView = { blocks: ipv6Blocks };
