import { ok, one, type OperationExamples } from '../shared/examples.js';

export const tlsCheckExamples: OperationExamples = {
  body: one('a host on port 443', { host: 'example.com', port: 443 }),
  ok: ok(
    {
      host: 'example.com',
      port: 443,
      ip: '203.0.113.10',
      servername: 'example.com',
      protocol: 'TLSv1.3',
      cipher: 'TLS_AES_256_GCM_SHA384',
      alpn: 'h2',
      authorized: true,
      authorization_error: null,
      hostname_match: true,
      certificate: {
        subject: 'CN=example.com',
        issuer: 'CN=Example Issuing CA,O=Example Trust,C=US',
        serial: '0AF3D1C4A1B3E2F6C9D8E7F6A5B4C3D2',
        not_before: '2026-09-01T00:00:00.000Z',
        not_after: '2026-12-30T23:59:59.000Z',
        days_left: 34,
        san: ['DNS:example.com', 'DNS:www.example.com'],
        fingerprint_sha256: '5E:F2:F2:14:26:0A:B8:F5:8E:55:EE:A4:2E:4A:C0:4B:0F:17:18:07:D8:D1:18:5F:DD:D6:74:70:D9:AB:6F:AF',
        key: { type: 'EC', bits: 256 },
      },
      chain: [
        { subject: 'CN=example.com', issuer: 'CN=Example Issuing CA,O=Example Trust,C=US', not_after: '2026-12-30T23:59:59.000Z' },
        { subject: 'CN=Example Issuing CA,O=Example Trust,C=US', issuer: 'CN=Example Root CA,O=Example Trust,C=US', not_after: '2031-04-13T23:59:59.000Z' },
      ],
      error: null,
    },
    'example.com:443: TLSv1.3, certificate trusted',
  ),
  invalid: { field: 'host', message: 'host: is required' },
};
