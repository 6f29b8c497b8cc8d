import { recordData } from '../dns-lookup/view.js';
import { bulkTable, errorCell, isObj, ms, str, type ResultView } from '../shared/view.js';

const lookupsTable = bulkTable('Lookups', ['Name', 'Type', 'Status', 'Records', 'Answered in'], [4], (r) =>
  r.error
    ? [{ text: str(r.domain) }, { text: str(r.type) }, errorCell(r), { text: '—' }, { text: '—' }]
    : [
        { text: str(r.domain) },
        { text: str(r.type) },
        { text: str(r.status), tone: r.status === 'NOERROR' ? 'ok' : 'bad' },
        { text: Array.isArray(r.records) && r.records.length ? r.records.filter(isObj).map(recordData).join('; ') : 'none', code: true },
        { text: ms(r.response_time) },
      ],
);

export const dnsLookupBulkView: ResultView = { blocks: lookupsTable };
