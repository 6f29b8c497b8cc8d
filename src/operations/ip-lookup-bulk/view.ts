import { bulkTable, errorCell, isObj, str, type ResultView } from '../shared/view.js';

const addressesTable = bulkTable('Addresses', ['Address', 'Kind', 'Place', 'Network'], [], (r) => {
  if (r.error) return [{ text: str(r.ip) }, errorCell(r), { text: '—' }, { text: '—' }];
  const loc = isObj(r.location) ? r.location : {};
  const asn = isObj(r.asn) ? r.asn : {};
  const place = [loc.city, loc.region, loc.country].filter((v) => typeof v === 'string' && v !== '').join(', ');
  return [
    { text: str(r.ip) },
    { text: `IPv${str(r.version)}, ${str(r.type)}` },
    { text: place || 'unknown' },
    { text: asn.number === null || asn.number === undefined ? 'unknown' : `AS${str(asn.number)} ${str(asn.organization)}` },
  ];
});

export const ipLookupBulkView: ResultView = { blocks: addressesTable };
