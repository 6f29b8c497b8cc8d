import { TABLE_ROWS_MAX, bytes, isObj, ms, str, type Block, type Json, type ResultView } from '../shared/view.js';

function httpBlocks(result: Json): Block[] {
  if (!isObj(result)) return [];
  const t = isObj(result.timings) ? result.timings : {};
  const tls = isObj(result.tls) ? result.tls : null;
  const status = typeof result.status === 'number' ? result.status : null;
  const blocks: Block[] = [
    {
      type: 'fields',
      title: 'Answer',
      fields: [
        { label: 'Asked', value: str(result.url) },
        ...(result.final_url !== result.url ? [{ label: 'Ended at', value: str(result.final_url) }] : []),
        { label: 'Status', value: status === null ? 'no answer' : `${status}${result.http_version ? ` over HTTP/${str(result.http_version)}` : ''}`, tone: status !== null && status < 400 ? 'ok' : 'bad' },
        { label: 'Server address', value: str(result.ip) },
        { label: 'Body', value: typeof result.body_bytes === 'number' ? `${bytes(result.body_bytes)}${result.body_truncated === true ? ', cut at the limit' : ''}` : '—' },
        ...(result.body_sha256 ? [{ label: 'Body SHA-256', value: str(result.body_sha256) }] : []),
        { label: 'TLS', value: tls ? `${str(tls.protocol)}, ${str(tls.cipher)}` : 'none (plain HTTP)' },
        ...(result.error ? [{ label: 'Error', value: str(result.error), tone: 'bad' as const }] : []),
      ],
    },
    {
      type: 'table',
      title: 'Timings (from the start of the last request)',
      columns: ['Step', 'Time'],
      numeric: [1],
      rows: (
        [
          ['Name resolved', t.dns],
          ['Connected', t.connect],
          ['TLS handshake done', t.tls],
          ['First byte', t.ttfb],
          ['Whole answer', t.total],
          ...('redirect' in t ? [['Redirects before it', t.redirect] as [string, Json]] : []),
        ] as [string, Json][]
      ).map(([step, v]) => [{ text: step }, { text: v === null || v === undefined ? 'not done' : ms(v), ...(v === null ? { tone: 'muted' as const } : {}) }]),
      more: 0,
    },
  ];
  const redirects = Array.isArray(result.redirects) ? result.redirects.filter(isObj) : [];
  if (redirects.length) {
    blocks.push({
      type: 'table',
      title: `Redirects followed (${redirects.length})`,
      columns: ['From', 'Status', 'To'],
      numeric: [1],
      rows: redirects.map((r) => [{ text: str(r.url), code: true }, { text: str(r.status) }, { text: str(r.location), code: true }]),
      more: 0,
    });
  }
  const headers = isObj(result.headers) ? Object.entries(result.headers) : [];
  if (headers.length) {
    blocks.push({
      type: 'table',
      title: `Response headers (${headers.length})`,
      columns: ['Header', 'Value'],
      numeric: [],
      rows: headers.slice(0, TABLE_ROWS_MAX).map(([k, v]) => [{ text: k, code: true }, { text: Array.isArray(v) ? v.map(str).join(', ') : str(v), code: true }]),
      more: Math.max(0, headers.length - TABLE_ROWS_MAX),
    });
  }
  return blocks;
}

export const httpCheckView: ResultView = { blocks: httpBlocks };
