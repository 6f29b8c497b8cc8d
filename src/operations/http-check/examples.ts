import { ok, one, type OperationExamples } from '../shared/examples.js';

export const httpCheckExamples: OperationExamples = {
  body: one('a URL that redirects once', { url: 'http://example.com/', method: 'GET', follow_redirects: true, timeout: 10 }),
  ok: ok(
    {
      url: 'http://example.com/',
      final_url: 'https://example.com/',
      ip: '203.0.113.10',
      status: 200,
      http_version: '1.1',
      redirects: [{ url: 'http://example.com/', status: 301, location: 'https://example.com/' }],
      timings: { dns: 4.12, connect: 22.87, tls: 48.3, ttfb: 71.05, total: 131.4, redirect: 52.61 },
      headers: { 'content-type': 'text/html; charset=UTF-8', 'content-length': '1256', 'cache-control': 'max-age=604800' },
      body_bytes: 1256,
      body_sha256: 'ea8fac7c65fb589b0d53560f5251f74f9e9b243478dcb6b3ea79b5e36449c8d9',
      body_truncated: false,
      tls: { protocol: 'TLSv1.3', cipher: 'TLS_AES_256_GCM_SHA384' },
      error: null,
    },
    'https://example.com/: HTTP 200 after 1 redirect',
  ),
  invalid: { field: 'url', message: 'url: must be an http:// or https:// URL' },
};
