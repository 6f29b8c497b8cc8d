import { pageTime } from '../../lib/time.js';
import { dateField, isObj, str, yesNo, type Block, type Json, type ResultView } from '../shared/view.js';

function tlsBlocks(result: Json, now: number): Block[] {
  if (!isObj(result)) return [];
  const cert = isObj(result.certificate) ? result.certificate : null;
  const key = cert && isObj(cert.key) ? cert.key : null;
  const days = cert && typeof cert.days_left === 'number' ? cert.days_left : null;
  const blocks: Block[] = [
    {
      type: 'fields',
      title: 'Connection',
      fields: [
        { label: 'Server', value: `${str(result.host)} port ${str(result.port)}${result.ip ? ` (${str(result.ip)})` : ''}` },
        { label: 'Trusted', value: result.authorized === true ? 'yes' : `no${result.authorization_error ? `: ${str(result.authorization_error)}` : ''}`, tone: result.authorized === true ? 'ok' : 'bad' },
        { label: 'Names the host', value: yesNo(result.hostname_match), tone: result.hostname_match === true ? 'ok' : 'bad' },
        { label: 'Protocol', value: `${str(result.protocol)}, ${str(result.cipher)}` },
        { label: 'ALPN', value: result.alpn ? str(result.alpn) : 'none' },
        ...(result.error ? [{ label: 'Error', value: str(result.error), tone: 'bad' as const }] : []),
      ],
    },
  ];
  if (cert) {
    const expiry = dateField('Expires', cert.not_after, now);
    blocks.push({
      type: 'fields',
      title: 'Certificate',
      fields: [
        { label: 'Subject', value: str(cert.subject) },
        { label: 'Issuer', value: str(cert.issuer) },
        { ...expiry, ...(days !== null && expiry.time !== undefined ? { value: `${pageTime(expiry.time, false)} (${days < 0 ? `expired ${-days} day${days === -1 ? '' : 's'} ago` : `${days} day${days === 1 ? '' : 's'} left`})`, tone: days > 14 ? ('ok' as const) : ('bad' as const) } : {}) },
        dateField('Valid from', cert.not_before, now),
        { label: 'Names (SAN)', value: Array.isArray(cert.san) && cert.san.length ? cert.san.map(str).join(', ') : 'none' },
        ...(key ? [{ label: 'Key', value: `${str(key.type)}${typeof key.bits === 'number' ? `, ${key.bits} bits` : ''}` }] : []),
        { label: 'Serial', value: str(cert.serial) },
        { label: 'SHA-256 fingerprint', value: str(cert.fingerprint_sha256) },
      ],
    });
  }
  const chain = Array.isArray(result.chain) ? result.chain.filter(isObj) : [];
  if (chain.length) {
    blocks.push({
      type: 'table',
      title: `Chain (${chain.length})`,
      columns: ['Subject', 'Issuer', 'Expires'],
      numeric: [],
      rows: chain.map((c) => [{ text: str(c.subject) }, { text: str(c.issuer) }, { text: dateField('', c.not_after, now).value }]),
      more: 0,
    });
  }
  return blocks;
}

export const tlsCheckView: ResultView = { blocks: tlsBlocks };
