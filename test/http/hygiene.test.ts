import assert from 'node:assert/strict';
import { test } from 'node:test';
import { build } from '../helpers/build.js';
import { httpText, rawRequest } from '../helpers/raw-http.js';

/** Nothing the API answers may be sniffed into another type or kept by a cache: tokens' data included. */
test('every /api answer carries X-Content-Type-Options: nosniff and Cache-Control: no-store', async (t) => {
  const b = await build(t, { plan: 'free' });
  const answers: Array<[string, Response]> = [
    ['200', await b.api('/api/user')],
    ['200 POST', await b.api('/api/ipv6/expand', { json: { ipv6: '2001:db8::1' } })],
    ['400', await b.api('/api/ipv6/expand', { json: { ipv6: 5 } })],
    ['401', await b.api('/api/user', { token: null })],
    ['404', await b.api('/api/nothing-here')],
    ['405', await b.api('/api/user', { method: 'DELETE' })],
    ['public document', await b.api('/api/openapi.json', { token: null })],
    ['CSV export', await b.api('/api/usage/export?format=csv')],
  ];
  for (let i = 0; i < 12; i++) await b.api('/api/user');
  answers.push(['429', await b.api('/api/user')]);
  for (const [name, res] of answers) {
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff', name);
    assert.equal(res.headers.get('cache-control'), 'no-store', name);
  }
  assert.equal(answers.at(-1)![1].status, 429);
  const port = Number(new URL(b.url).port);
  const bad = await rawRequest(port, httpText('GET', '/api/%zz'));
  assert.equal(bad.status, 400);
  assert.equal(bad.headers['x-content-type-options'], 'nosniff');
  assert.equal(bad.headers['cache-control'], 'no-store');
});
