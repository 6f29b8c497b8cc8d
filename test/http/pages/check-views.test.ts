import assert from 'node:assert/strict';
import { test } from 'node:test';
import { OPERATIONS } from '../../../src/operations/index.js';
import { bodyOf, checkToolOf } from '../../../src/http/pages/check-forms.js';
import { resultBlocks as blocksOf, type Block, type Json } from '../../../src/operations/shared/view.js';

const NOW = Date.parse('2026-11-26T12:00:00Z');
/** The blocks the job page of an endpoint shows of a result: its operation's view, or the generic one. */
const resultBlocks = (path: string, result: Json, now: number, total?: number): Block[] =>
  blocksOf(OPERATIONS.find((op) => op.path === path)?.view, result, now, total);
const fields = (blocks: Block[], title: string) => {
  const b = blocks.find((x) => x.title === title);
  assert.ok(b && b.type === 'fields', `a "${title}" block`);
  return Object.fromEntries(b.fields.map((f) => [f.label, f]));
};

test('WHOIS: dates as dates with how far away they are; name servers and hops', () => {
  const blocks = resultBlocks('/dns/whois', {
    domain: 'example.test', registered: true, registrar: 'Registrar Inc.', registrar_url: null, whois_server: 'whois.test',
    creation_date: '1995-08-14T04:00:00Z', updated_date: '2026-11-20T00:00:00Z', expiration_date: '2027-08-13T04:00:00Z',
    name_servers: ['a.iana-servers.net'], status: ['clientDeleteProhibited'], dnssec: true, raw: 'Domain Name: EXAMPLE.TEST', error: null,
    hops: [{ server: 'whois.test', status: 'ok', error: null, bytes: 120, response_time: 12.5 }],
  }, NOW);
  const f = fields(blocks, 'Registration');
  assert.deepEqual(f.Expiration, { label: 'Expiration', value: '2027-08-13 04:00 UTC (in 260 days)', time: '2027-08-13T04:00:00Z' });
  assert.equal(f.Updated!.value, '2026-11-20 00:00 UTC (6 days ago)');
  assert.equal(f.Registered!.value, 'yes');
  assert.ok(!('Registrar url' in f), 'a null field is left out');
  assert.ok(blocks.some((b) => b.type === 'list' && b.items.includes('a.iana-servers.net')));
  assert.ok(blocks.some((b) => b.type === 'text' && b.text.startsWith('Domain Name')));
  // A date a peer wrote badly is shown as it came, never parsed as something else.
  assert.equal(fields(resultBlocks('/dns/whois', { domain: 'x.test', creation_date: 'yesterday-ish' }, NOW), 'Registration').Creation!.value, 'yesterday-ish');
});

test('IP: place, network, and the risk score with its reasons', () => {
  const blocks = resultBlocks('/ip/lookup', {
    ip: '203.0.113.9', version: 4, type: 'public', hostname: null,
    location: { country: 'Germany', country_code: 'DE', region: 'Hesse', city: 'Frankfurt', postal_code: null, latitude: 50.1, longitude: 8.6, timezone: 'Europe/Berlin', isp: 'Example' },
    asn: { number: 64500, organization: 'Example Hosting', network: '203.0.113.0/24' },
    security: { is_tor: true, is_proxy: false, is_hosting: true, is_bogon: false, blacklists: [{ list: 'zen.example', listed: true, response: ['127.0.0.2'] }], risk_score: 75, threats: ['tor'] },
  }, NOW);
  assert.equal(fields(blocks, 'Place').City!.value, 'Frankfurt, Hesse, Germany');
  assert.equal(fields(blocks, 'Network').AS!.value, 'AS64500');
  const risk = fields(blocks, 'Risk');
  assert.deepEqual([risk['Risk score']!.value, risk['Risk score']!.tone], ['75 of 100', 'bad']);
  assert.equal(risk.Reasons!.value, 'Tor exit node; hosting network; listed on zen.example');
});

test('proxy: the verdict and every check with its time', () => {
  const blocks = resultBlocks('/proxy/check', {
    proxy: '127.0.0.1:8080', status: 'working', protocol: 'http', response_time: 41.2, anonymity_level: 'elite', ssl_support: true,
    exit_ip: '127.0.0.1', error: null, checked_at: '2026-11-26T11:00:00Z', host: '127.0.0.1', port: 8080,
    checks: { protocol: { status: 'ok', error: null, time: 20.1, tried: ['http'] }, ssl: { status: 'failed', error: 'handshake refused', time: 3 } },
  }, NOW);
  assert.deepEqual([fields(blocks, 'Verdict').Verdict!.value, fields(blocks, 'Verdict').Verdict!.tone], ['working', 'ok']);
  const table = blocks.find((b) => b.type === 'table');
  assert.ok(table && table.type === 'table');
  assert.deepEqual(table.rows.map((r) => r.map((c) => c.text)), [['Protocol', 'ok', '20.1 ms'], ['TLS', 'failed: handshake refused', '3 ms']]);
});

test('an endpoint with no view of its own: nested fields flattened, lists of objects as tables, certificate dates as dates', () => {
  const blocks = resultBlocks('/some/new-check', { host: 'example.test', valid: false, certificate: { subject: 'CN=example.test', not_after: '2026-12-06T00:00:00Z' }, chain: [{ subject: 'CN=a' }, { subject: 'CN=b', issuer: 'CN=root' }] }, NOW);
  const f = fields(blocks, 'Result');
  assert.equal(f.Valid!.value, 'no');
  assert.equal(f['Certificate not after']!.value, '2026-12-06 00:00 UTC (in 10 days)');
  const chain = blocks.find((b) => b.type === 'table');
  assert.ok(chain && chain.type === 'table');
  assert.deepEqual(chain.columns, ['Subject', 'Issuer']);
  assert.deepEqual(chain.rows.map((r) => r.map((c) => c.text)), [['CN=a', '—'], ['CN=b', 'CN=root']]);
});

test('forms to bodies: ticks, numbers, lists and JSON as the API takes them; empty optional fields left out', () => {
  const tool = (path: string) => checkToolOf(OPERATIONS.find((op) => op.path === path)!);
  assert.deepEqual(bodyOf(tool('/ip/lookup-bulk'), { ips: ' 192.0.2.1 \r\n\r\n2001:db8::1\n', detailed: 'false', security_check: 'true' }), { ips: ['192.0.2.1', '2001:db8::1'], detailed: false, security_check: true });
  assert.deepEqual(bodyOf(tool('/port/scan-range'), { host: ' 127.0.0.1 ', ports: '22,80', timeout: '', webhook_url: '' }), { host: '127.0.0.1', ports: '22,80' });
  assert.deepEqual(bodyOf(tool('/port/scan'), { host: 'h', port: '443', timeout: 'soon' }), { host: 'h', port: 443, timeout: 'soon' }, 'what is not a number goes as typed, for the validator to refuse');
  const json = { ...tool('/port/scan'), fields: [{ name: 'headers', label: 'Headers', kind: 'json' as const, required: false, hint: '', value: '' }] };
  assert.deepEqual(bodyOf(json, { headers: '{"a": "b"}' }), { headers: { a: 'b' } });
  assert.throws(() => bodyOf(json, { headers: '{a' }), /headers: is not JSON/);
});

/** Every text a page shows of a result: titles, labels, columns, values and cells. */
function texts(blocks: Block[]): { names: string[]; values: string[] } {
  const names: string[] = [];
  const values: string[] = [];
  for (const b of blocks) {
    names.push(b.title);
    if (b.type === 'fields') {
      names.push(...b.fields.map((f) => f.label));
      values.push(...b.fields.map((f) => f.value));
    }
    if (b.type === 'table') {
      names.push(...b.columns);
      values.push(...b.rows.flat().map((c) => c.text));
    }
  }
  return { names, values };
}

test("every operation's documented answer reads in a person's words: no field names, acronyms spelled right, a unit on every duration", () => {
  for (const op of OPERATIONS) {
    const example = Object.values(op.examples.ok['application/json']!)[0]!.value as { data: unknown };
    const { names, values } = texts(resultBlocks(op.path, example.data, NOW));
    assert.ok(names.length > 1, `${op.path}: a view`);
    for (const name of names) {
      assert.doesNotMatch(name, /_/, `${op.path}: "${name}" is a field name`);
      assert.doesNotMatch(name, /\b(Ip|Ips|Url|Http|Tls|Ssl|Dns|Ipv6|Ipv4|Dnssec|Ttl|Asn|Rdap|Whois|Alpn|Sha256|Mdev|Ttfb)\b/, `${op.path}: "${name}" spells an acronym as a field name`);
    }
    // A decimal alone is a duration (or a percentage) without its unit.
    for (const value of values) assert.doesNotMatch(value, /^-?\d+\.\d+$/, `${op.path}: "${value}" has no unit`);
  }
});

test('HTTP check: the answer, each timing with its unit, redirects and headers', () => {
  const blocks = resultBlocks('/http/check', {
    url: 'http://a.test/', final_url: 'https://a.test/', ip: '192.0.2.1', status: 301, http_version: '1.1', redirects: [],
    timings: { dns: 1.5, connect: 2, tls: null, ttfb: 9.25, total: 10 }, headers: { server: 'nginx' }, body_bytes: 0, body_sha256: null, tls: null, error: null,
  }, NOW);
  const f = fields(blocks, 'Answer');
  assert.equal(f.Status!.value, '301 over HTTP/1.1');
  assert.equal(f.TLS!.value, 'none (plain HTTP)');
  const timings = blocks.find((b) => b.type === 'table' && b.title.startsWith('Timings'));
  assert.ok(timings && timings.type === 'table');
  assert.deepEqual(timings.rows.map((r) => r.map((c) => c.text)), [['Name resolved', '1.5 ms'], ['Connected', '2 ms'], ['TLS handshake done', 'not done'], ['First byte', '9.25 ms'], ['Whole answer', '10 ms']]);
});

test('a port scan of a name that does not resolve says so once, with no row per port', () => {
  const items = Array.from({ length: 1000 }, (_, i) => ({ host: 'nx.test', ip: null, port: i + 1, open: false, state: 'unresolved', service: null, response_time: null, error: 'NXDOMAIN' }));
  const blocks = resultBlocks('/port/scan-range', items, NOW);
  assert.deepEqual(blocks.map((b) => b.type), ['fields']);
  const f = fields(blocks, 'Target');
  assert.equal(f.Address!.value, 'did not resolve: NXDOMAIN');
  assert.equal(f.Ports!.value, 'none scanned (1000 asked): no address to send to');
});
