import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { createDialer } from '../../src/infra/net/dialer.js';
import { startDnsServer } from '../fixtures/dns-server.js';
import { build } from '../helpers/build.js';
import { assertMatchesOpenApi } from '../helpers/contract.js';
import { connectSpy, hangingConnect } from '../infra/net/fixtures/connect-spy.js';
import { eventually } from '../helpers/eventually.js';

test('/ipv6/validate and /ipv6/expand through the API', async (t) => {
  const { api, app } = await build(t);
  const valid = await api('/api/ipv6/validate', { json: { ipv6: '2001:DB8:0:0:0:0:0:1' } });
  assert.equal(valid.status, 200);
  const vbody = (await valid.json()) as { data: Record<string, unknown> };
  await assertMatchesOpenApi(app, 'POST', '/api/ipv6/validate', 200, vbody);
  assert.deepEqual(vbody.data, {
    ipv6: '2001:DB8:0:0:0:0:0:1',
    valid: true,
    type: 'documentation',
    compressed: '2001:db8::1',
    expanded: '2001:0db8:0000:0000:0000:0000:0000:0001',
    reason: null,
  });
  const zone = (await (await api('/api/ipv6/validate', { json: { ipv6: 'fe80::1%eth0' } })).json()) as { data: { valid: boolean; type: string } };
  assert.equal(zone.data.valid, true);
  assert.equal(zone.data.type, 'link_local');
  // invalid text is a 200 with valid: false and a reason
  const invalid = await api('/api/ipv6/validate', { json: { ipv6: '1::2::3' } });
  assert.equal(invalid.status, 200);
  const ibody = (await invalid.json()) as { data: { valid: boolean; reason: string; expanded: null } };
  await assertMatchesOpenApi(app, 'POST', '/api/ipv6/validate', 200, ibody);
  assert.equal(ibody.data.valid, false);
  assert.ok(ibody.data.reason.length > 5);

  const expanded = await api('/api/ipv6/expand', { json: { ipv6: '::ffff:1.2.3.4' } });
  const ebody = (await expanded.json()) as { data: Record<string, string> };
  await assertMatchesOpenApi(app, 'POST', '/api/ipv6/expand', 200, ebody);
  assert.equal(ebody.data.expanded, '0000:0000:0000:0000:0000:ffff:0102:0304');
  const bad = await api('/api/ipv6/expand', { json: { ipv6: '12345::' } });
  assert.equal(bad.status, 400);
  const badBody = (await bad.json()) as { error: string; message: string; details: { field: string } };
  assert.equal(badBody.error, 'validation_error');
  assert.equal(badBody.details.field, 'ipv6');
  assert.match(badBody.message, /^ipv6: /);
  for (const body of [{}, { ipv6: 42 }, { ipv6: ['::1'] }]) {
    assert.equal((await api('/api/ipv6/validate', { json: body })).status, 400, JSON.stringify(body));
  }
  // docs/api.md: 200 for every string, the empty and the overlong included, with the reason (issue 16)
  for (const [text, reason] of [['', /empty/], [`${'1:'.repeat(300)}1`, /longer than/]] as const) {
    const res = await api('/api/ipv6/validate', { json: { ipv6: text } });
    assert.equal(res.status, 200, text);
    const body = (await res.json()) as { data: { valid: boolean; reason: string } };
    await assertMatchesOpenApi(app, 'POST', '/api/ipv6/validate', 200, body);
    assert.equal(body.data.valid, false);
    assert.match(body.data.reason, reason);
  }
});

test('/ipv6/test refuses forbidden targets with 403 before the dialer is asked to connect', async (t) => {
  const aaaa = (name: string, data: string) => ({ name, type: 'AAAA' as const, ttl: 60, data });
  const dns = await startDnsServer({
    records: [aaaa('private.test', 'fd00::1'), aaaa('mixed.test', '2606:4700::1111'), aaaa('mixed.test', '::1'), aaaa('mapped.test', '::ffff:10.0.0.1')],
  });
  t.after(() => dns.close());
  const dnsAddress = `${dns.host}:${dns.port}`;
  const spy = connectSpy();
  const dialer = createDialer(loadConfig({ NETDIAG_DNS_SERVERS: dnsAddress }), { connectFn: spy.fn });
  const { api, app } = await build(t, { env: { NETDIAG_DNS_SERVERS: dnsAddress }, deps: { dialer } });
  const forbidden = [
    '::1', '[::1]', '0:0:0:0:0:0:0:1', '::', '::ffff:127.0.0.1', '[::ffff:7f00:1]', '::ffff:10.0.0.1', '::ffff:192.168.1.1',
    '64:ff9b::a00:1', '64:ff9b::7f00:1', '2002:a00:1::', '2002:7f00:1::', 'fe80::1', 'fe80::1%lo', 'fc00::1', 'fd12:3456::1',
    'ff02::1', '2001:db8::1', '3fff::1', '2001:2::1', '127.0.0.1', '2130706433', '0x7f.1', '127.1', '0177.0.0.1', '10.0.0.1', '169.254.169.254', 'localhost', 'LOCALHOST.', 'foo.localhost', 'private.test', 'mixed.test', 'mapped.test',
  ];
  for (const target of forbidden) {
    const res = await api('/api/ipv6/test', { json: { target } });
    const body = (await res.json()) as { error: string; message: string; details: { address: string; range: string } };
    assert.equal(res.status, 403, `${target}: ${JSON.stringify(body)}`);
    assert.equal(body.error, 'target_forbidden', target);
    assert.ok(body.details.address && body.details.range, target);
    assert.match(body.message, /blocked/, target);
    await assertMatchesOpenApi(app, 'POST', '/api/ipv6/test', 403, body);
  }
  assert.equal(spy.calls.length, 0, 'no connect was attempted');
  assert.equal(dialer.stats.connectAttempts, 0);
  for (const bad of ['not a host!', 'a'.repeat(300), 'http://[::1]/']) {
    assert.equal((await api('/api/ipv6/test', { json: { target: bad } })).status, 400, bad);
  }
  assert.equal((await api('/api/ipv6/test', { json: { target: '::1', port: 0 } })).status, 400);
  assert.equal((await api('/api/ipv6/test', { json: { target: '::1', port: '443' } })).status, 400);
  assert.equal(spy.calls.length, 0);
});

test('/ipv6/test against a listener on [::1] is reachable; a closed port is not, with a reason', async (t) => {
  const server = net.createServer((s) => s.destroy());
  await new Promise<void>((r) => server.listen(0, '::1', r));
  t.after(() => new Promise<void>((r) => server.close(() => r())));
  const open = (server.address() as net.AddressInfo).port;
  const closedServer = net.createServer();
  await new Promise<void>((r) => closedServer.listen(0, '::1', r));
  const closed = (closedServer.address() as net.AddressInfo).port;
  await new Promise<void>((r) => closedServer.close(() => r()));

  const { api, app } = await build(t, { env: { NETDIAG_ALLOW_TARGETS: '::1/128' } });
  const res = await api('/api/ipv6/test', { json: { target: '::1', port: open } });
  assert.equal(res.status, 200);
  const body = (await res.json()) as { data: Record<string, unknown> };
  await assertMatchesOpenApi(app, 'POST', '/api/ipv6/test', 200, body);
  assert.equal(body.data.reachable, true);
  assert.equal(body.data.address, '::1');
  assert.equal(body.data.port, open);
  assert.equal(typeof body.data.response_time, 'number');
  assert.equal(body.data.error, null);
  assert.deepEqual(body.data.addresses, ['::1']);

  const down = (await (await api('/api/ipv6/test', { json: { target: '[::1]', port: closed } })).json()) as { data: Record<string, unknown> };
  assert.equal(down.data.reachable, false);
  assert.equal(down.data.response_time, null);
  assert.match(String(down.data.error), /refused/);
});

test('/ipv6/test: a client that hangs up stops the connects, and the call is recorded as failed', async (t) => {
  // Connects that never answer: each would wait the full 5 s.
  const { fn: connectFn, sockets } = hangingConnect();
  const dialer = createDialer({ allowTargets: ['::1/128'], dnsServers: [{ host: '127.0.0.1', port: 1 }] }, { connectFn });
  const b = await build(t, { deps: { dialer } });
  const controller = new AbortController();
  const pending = b.api('/api/ipv6/test', { json: { target: '::1' }, signal: controller.signal }).catch((err: unknown) => err);
  await eventually(() => dialer.stats.active >= 2);
  assert.equal(dialer.stats.active, 2, 'ports 443 and 80 are being tried');
  controller.abort();
  await pending;
  await eventually(() => dialer.stats.active === 0);
  assert.equal(dialer.stats.active, 0, 'both connects were abandoned');
  assert.ok(sockets.length === 2 && sockets.every((s) => s.destroyed));
  const stats = (await (await b.api('/api/usage/stats')).json()) as {
    data: { today: { failed: number; successful: number }; by_endpoint: Record<string, number> };
  };
  assert.equal(stats.data.by_endpoint['/ipv6/test'], 1);
  assert.equal(stats.data.today.failed, 1, 'a hang-up is a failed call (499), not a successful "unreachable"');
});
