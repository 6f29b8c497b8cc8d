import assert from 'node:assert/strict';
import { test } from 'node:test';
import { roomyLimiter } from '../helpers/roomy-limiter.js';
import { build } from '../helpers/build.js';

/**
 * Every POST tool against a table of hostile bodies: each answer is a 4xx envelope (or a 200
 * diagnosis), never a 500 and never a hang. Nothing here can reach beyond loopback: targets are
 * refused by the policy and the resolver is a closed loopback port.
 */
const ENDPOINTS: Record<string, string[]> = {
  '/api/proxy/check': ['proxy'],
  '/api/proxy/check-bulk': ['proxies'],
  '/api/ip/lookup': ['ip'],
  '/api/ip/lookup-bulk': ['ips'],
  '/api/dns/lookup': ['domain', 'type'],
  '/api/dns/lookup-bulk': ['domains', 'type'],
  '/api/dns/whois': ['domain'],
  '/api/port/scan': ['host', 'port', 'timeout'],
  '/api/port/scan-range': ['host', 'ports', 'timeout'],
  '/api/port/scan-common': ['host', 'preset', 'timeout'],
  '/api/ipv6/test': ['target', 'port'],
  '/api/ipv6/validate': ['ipv6'],
  '/api/ipv6/expand': ['ipv6'],
};

const HOSTILE_VALUES: unknown[] = [
  null,
  true,
  -1,
  1e308,
  0.5,
  '',
  ' ',
  'x'.repeat(10_000),
  '\u0000\r\nX-Injected: 1',
  '../../etc/passwd',
  '127.0.0.1',
  '[::1]:80',
  'http://169.254.169.254/latest/meta-data',
  '💥.example',
  [],
  ['127.0.0.1'],
  Array.from({ length: 2000 }, () => 'a'),
  {},
  { $gt: '' },
];


test('hostile bodies on every tool: 4xx envelopes or 200 diagnoses, never a 500', async (t) => {
  const { app, token } = await build(t, { deps: { limiter: roomyLimiter() } });
  let requests = 0;
  for (const [url, fields] of Object.entries(ENDPOINTS)) {
    const bodies: unknown[] = [{}, [], 'null', ...HOSTILE_VALUES.flatMap((v) => fields.map((f) => ({ [f]: v })))];
    for (const body of bodies) {
      requests++;
      const res = await app.inject({
        method: 'POST',
        url,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        payload: typeof body === 'string' ? body : JSON.stringify(body),
      });
      const label = `${url} ${JSON.stringify(body).slice(0, 80)}`;
      assert.ok(res.statusCode < 500, `${label} → ${res.statusCode} ${res.body.slice(0, 200)}`);
      assert.notEqual(res.statusCode, 429, `${label}: the limiter must not hide the tool's answer`);
      const json = res.json() as { success: boolean; error?: string; message?: string };
      if (res.statusCode >= 400) {
        assert.equal(json.success, false, label);
        assert.ok(json.error && json.message, label);
      }
    }
  }
  t.diagnostic(`${requests} hostile requests, no 5xx`);
});
