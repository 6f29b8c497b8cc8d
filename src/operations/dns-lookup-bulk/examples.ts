import { DNS_A } from '../dns-lookup/examples.js';
import { ok, one, type OperationExamples } from '../shared/examples.js';

export const dnsLookupBulkExamples: OperationExamples = {
  body: one('several names, one type', { domains: ['example.com', 'example.net', 'nonexistent.example', 'bad..example'], type: 'A' }),
  ok: ok(
    [
      DNS_A,
      { ...DNS_A, domain: 'example.net', records: [{ type: 'A', ttl: 3600, address: '93.184.215.14' }], response_time: 14.02 },
      { ...DNS_A, domain: 'nonexistent.example', status: 'NXDOMAIN', records: [], response_time: 9.71 },
      {
        domain: 'bad..example',
        type: 'A',
        error: 'domains[3]: must not contain an empty label (two dots in a row, or a leading dot)',
        error_code: 'validation_error',
      },
    ],
    '4 lookups, 1 invalid',
  ),
  invalid: { field: 'domains', message: 'domains: at most 50 entries' },
};
