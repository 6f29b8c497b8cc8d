import { bulkTable, ms, str, type ResultView } from '../shared/view.js';

const proxiesTable = bulkTable('Proxies', ['Proxy', 'Verdict', 'Protocol', 'Round trip', 'Anonymity', 'Exit address'], [3], (r) => [
  { text: str(r.proxy) },
  { text: r.error && r.status !== 'working' ? `${str(r.status)}: ${str(r.error)}` : str(r.status), tone: r.status === 'working' ? 'ok' : 'bad' },
  { text: str(r.protocol) },
  { text: ms(r.response_time) },
  { text: str(r.anonymity_level ?? 'not judged') },
  { text: str(r.exit_ip) },
]);

export const proxyCheckBulkView: ResultView = { blocks: proxiesTable };
