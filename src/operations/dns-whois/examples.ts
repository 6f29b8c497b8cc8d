import { ok, one, type OperationExamples } from '../shared/examples.js';

export const dnsWhoisExamples: OperationExamples = {
  body: one('a registered domain', { domain: 'example.com' }),
  ok: ok(
    {
      domain: 'example.com',
      registered: true,
      registrar: 'RESERVED-Internet Assigned Numbers Authority',
      registrar_url: null,
      whois_server: 'whois.iana.org',
      creation_date: '1995-08-14T04:00:00Z',
      updated_date: '2024-08-14T07:01:34Z',
      expiration_date: '2025-08-13T04:00:00Z',
      name_servers: ['a.iana-servers.net', 'b.iana-servers.net'],
      status: ['clientDeleteProhibited', 'clientTransferProhibited', 'clientUpdateProhibited'],
      dnssec: true,
      raw: '{"objectClassName":"domain","handle":"2336799_DOMAIN_COM-VRSN","ldhName":"EXAMPLE.COM",...}',
      hops: [{ server: 'https://rdap.verisign.com/com/v1/domain/example.com', status: 'ok', error: null, bytes: 4127, response_time: 96.4 }],
      error: null,
      source: 'rdap',
      rdap_server: 'https://rdap.verisign.com/com/v1/',
      registrant: null,
      abuse_email: null,
    },
    'example.com: registered (rdap)',
  ),
  invalid: { field: 'domain', message: 'domain: is required' },
};
