import assert from 'node:assert/strict';
import { after, before, test, type TestContext } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { OPERATIONS } from '../../src/operations/index.js';
import { toolNameOf } from '../../src/operations/names.js';
import { createDialer } from '../../src/infra/net/dialer.js';
import { build, type Built } from '../helpers/build.js';
import { startDnsServer, type DnsFixture } from '../fixtures/dns-server.js';
import { EXAMPLE_ZONE } from '../fixtures/example-zone.js';
import { connectSpy, hangingConnect } from '../infra/net/fixtures/connect-spy.js';
import { eventually } from '../helpers/eventually.js';

/**
 * POST /mcp with the SDK's own client over Streamable HTTP, against a live server: the tools are
 * the operations, and a tool call is a call of its endpoint (same data, same errors, same usage).
 */

let dns: DnsFixture;
before(async () => {
  dns = await startDnsServer({ records: [...EXAMPLE_ZONE, { name: 'mcp.example.test', type: 'MX', ttl: 300, data: { preference: 10, exchange: 'mail.example.test' } }] });
});
after(() => dns.close());

async function server(t: TestContext, opts: Parameters<typeof build>[1] = {}): Promise<Built> {
  return build(t, { ...opts, env: { NETDIAG_DNS_SERVERS: `127.0.0.1:${dns.port}`, ...opts.env } });
}

/** An MCP client connected to the server's /mcp with `token` (none: no Authorization header). */
async function connect(t: TestContext, b: Built, token: string | null = b.token): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', b.url), {
    requestInit: token === null ? {} : { headers: { authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: 'netdiag-test', version: '1.0.0' });
  await client.connect(transport);
  t.after(() => client.close());
  return client;
}

async function apiData(b: Built, path: string, json: unknown): Promise<unknown> {
  const res = await b.api(`/api${path}`, { json });
  assert.equal(res.status, 200);
  return ((await res.json()) as { data: unknown }).data;
}

function text(result: CallToolResult): string {
  const first = result.content[0];
  assert.equal(first?.type, 'text');
  return first.text;
}

async function byEndpoint(b: Built): Promise<Record<string, number>> {
  const res = await b.api('/api/usage/stats');
  return ((await res.json()) as { data: { by_endpoint: Record<string, number> } }).data.by_endpoint;
}

test('the tools are the operations, named from their paths, with their body schemas', async (t) => {
  const b = await server(t);
  const client = await connect(t, b);
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((tool) => tool.name).sort(), OPERATIONS.map((op) => toolNameOf(op.path)).sort());
  for (const op of OPERATIONS) {
    const tool = tools.find((x) => x.name === toolNameOf(op.path))!;
    assert.deepEqual(tool.inputSchema, JSON.parse(JSON.stringify(op.body)), tool.name);
    assert.ok(!('webhook_url' in (tool.inputSchema.properties ?? {})), 'a tool call is synchronous: no webhook_url');
    assert.ok(tool.description?.startsWith(op.summary), tool.name);
    assert.equal(tool.outputSchema?.type, 'object');
  }
  const scan = tools.find((x) => x.name === 'port_scan')!;
  assert.match(scan.description ?? '', /port \(integer 1–65535; required\)/);
  assert.match(scan.description ?? '', /timeout \(integer 1–30; default 5\)/);
  // initialize and tools/list are no calls.
  assert.deepEqual(await byEndpoint(b), { '/usage/stats': 1 });
});

test('ipv6_expand and dns_lookup answer the API\'s data as structured content, and count as calls of their endpoints', async (t) => {
  const b = await server(t);
  const client = await connect(t, b);

  const expand = (await client.callTool({ name: 'ipv6_expand', arguments: { ipv6: '2001:db8::1' } })) as CallToolResult;
  assert.equal(expand.isError, undefined);
  assert.deepEqual(expand.structuredContent, await apiData(b, '/ipv6/expand', { ipv6: '2001:db8::1' }));
  assert.equal(text(expand), 'address expanded');
  assert.deepEqual(JSON.parse((expand.content[1] as { text: string }).text), expand.structuredContent);

  const lookup = (await client.callTool({ name: 'dns_lookup', arguments: { domain: 'mcp.example.test', type: 'mx' } })) as CallToolResult;
  assert.equal(lookup.isError, undefined, text(lookup));
  const direct = (await apiData(b, '/dns/lookup', { domain: 'mcp.example.test', type: 'MX' })) as { records: Array<{ exchange: string }> };
  assert.equal(direct.records[0]!.exchange, 'mail.example.test');
  // Everything but the times and whether the second answer came from the cache.
  const timeless = (data: unknown) => ({ ...(data as object), query_time: 0, response_time: 0, cached: false });
  assert.deepEqual(timeless(lookup.structuredContent), timeless(direct));
  assert.equal(typeof (lookup.structuredContent as { response_time: unknown }).response_time, 'number');

  const rate = (lookup._meta as Record<string, { remaining: number; limit: number }>)['netdiag/rate_limit']!;
  assert.equal(typeof rate.remaining, 'number');
  // Two tool calls and two direct calls, each under its endpoint; the MCP requests themselves none.
  assert.deepEqual(await byEndpoint(b), { '/ipv6/expand': 2, '/dns/lookup': 2, '/usage/stats': 1 });
});

test('bulk data comes as {items}, as the output schema says', async (t) => {
  const b = await server(t);
  const client = await connect(t, b);
  const result = (await client.callTool({ name: 'dns_lookup_bulk', arguments: { domains: ['mcp.example.test', 'example.com'], type: 'MX' } })) as CallToolResult;
  assert.equal(result.isError, undefined, text(result));
  const items = (result.structuredContent as { items: Array<{ domain: string }> }).items;
  assert.deepEqual(items.map((i) => i.domain), ['mcp.example.test', 'example.com']);
});

test('without a token, or with a bad one, /mcp is refused as /api is', async (t) => {
  const b = await server(t);
  await assert.rejects(connect(t, b, null), (err: { code?: number; message: string }) => err.code === 401 && /"error":"unauthorized"/.test(err.message));
  await assert.rejects(connect(t, b, 'nd_' + 'x'.repeat(40)), (err: { code?: number }) => err.code === 401);
  const res = await fetch(`${b.url}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  assert.equal(res.status, 401);
  assert.equal(res.headers.get('www-authenticate'), 'Bearer realm="netdiag"');
  const body = (await res.json()) as { success: boolean; error: string; message: string };
  assert.equal(body.success, false);
  assert.equal(body.error, 'unauthorized');
});

test('a forbidden target is a tool error with the API\'s message, and nothing was dialed', async (t) => {
  const spy = connectSpy();
  // No NETDIAG_ALLOW_TARGETS: the production policy.
  const dialer = createDialer({ allowTargets: [], dnsServers: [{ host: '127.0.0.1', port: dns.port }] }, { connectFn: spy.fn });
  const b = await server(t, { deps: { dialer } });
  const client = await connect(t, b);
  const result = (await client.callTool({ name: 'port_scan', arguments: { host: '127.0.0.1', port: 80 } })) as CallToolResult;
  assert.equal(result.isError, true);
  const res = await b.api('/api/port/scan', { json: { host: '127.0.0.1', port: 80 } });
  const api = (await res.json()) as { error: string; message: string };
  assert.equal(res.status, 403);
  assert.equal(text(result), api.message);
  assert.equal((result._meta as Record<string, { error: string }>)['netdiag/error']!.error, 'target_forbidden');
  assert.equal(dialer.stats.connectAttempts, 0);
  assert.equal(spy.calls.length, 0);
  assert.equal((await byEndpoint(b))['/port/scan'], 2);
});

test('numbers are validated as the API validates them: a tool error naming the field', async (t) => {
  const b = await server(t);
  const client = await connect(t, b);
  for (const [args, message] of [
    [{ host: 'example.com', port: 70000 }, 'port: must be between 1 and 65535'],
    [{ host: 'example.com', port: 80.5 }, 'port: must be an integer'],
    [{ host: 'example.com', port: '80' }, 'port: must be an integer'],
    [{ host: 'example.com', port: 80, timeout: 0 }, 'timeout: must be between 1 and 30'],
    [{ host: 'example.com' }, 'port: is required'],
  ] as const) {
    const result = (await client.callTool({ name: 'port_scan', arguments: args })) as CallToolResult;
    assert.equal(result.isError, true, JSON.stringify(args));
    assert.equal(text(result), message);
    assert.equal((result._meta as Record<string, { status: number; details: { field: string } }>)['netdiag/error']!.status, 400);
  }
  // A tool call is synchronous: the range scan's bound is the synchronous call's, not a job's.
  for (const [args, message] of [
    [{ host: 'example.com', ports: '1-1001' }, 'ports: at most 1000 ports, "1-1001" expands to 1001; a job (Prefer: respond-async) takes up to 65535'],
    [{ host: 'example.com', ports: Array.from({ length: 1001 }, (_, i) => i + 1) }, 'ports: at most 1000 entries; a job (Prefer: respond-async) takes up to 65535'],
  ] as const) {
    const result = (await client.callTool({ name: 'port_scan_range', arguments: args })) as CallToolResult;
    assert.equal(result.isError, true, JSON.stringify(args));
    assert.equal(text(result), message);
    assert.equal((result._meta as Record<string, { status: number; details: { field: string } }>)['netdiag/error']!.status, 400);
  }
});

test('a 429 is a tool error with the API\'s message and its Retry-After', async (t) => {
  const b = await server(t, { plan: 'free' });
  const client = await connect(t, b);
  let last: CallToolResult | undefined;
  for (let i = 0; i < 11; i++) last = (await client.callTool({ name: 'ipv6_expand', arguments: { ipv6: '::1' } })) as CallToolResult;
  assert.equal(last!.isError, true);
  assert.match(text(last!), /rate limit exceeded for the free plan: at most 10 requests per minute/);
  const meta = last!._meta as Record<string, { retry_after?: number; remaining?: number; error?: string }>;
  assert.equal(meta['netdiag/error']!.error, 'rate_limit_exceeded');
  assert.equal(meta['netdiag/rate_limit']!.remaining, 0);
  assert.ok((meta['netdiag/rate_limit']!.retry_after ?? 0) >= 1);
  // Ten calls, the eleventh refused; listing the tools still works (it is no call).
  assert.equal((await client.listTools()).tools.length, OPERATIONS.length);
});

test('an unknown tool is a protocol error; GET and DELETE /mcp are 405', async (t) => {
  const b = await server(t);
  const client = await connect(t, b);
  await assert.rejects(client.callTool({ name: 'no_such_tool', arguments: {} }), /unknown tool "no_such_tool"/);
  for (const method of ['GET', 'DELETE']) {
    const res = await b.api('/mcp', { method, headers: { accept: 'text/event-stream' } });
    assert.equal(res.status, 405, method);
  }
});

test('a batch is bounded, and a body over 1 MiB is a 413', async (t) => {
  const b = await server(t);
  const headers = { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' };
  const call = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'ipv6_expand', arguments: { ipv6: '::1' } } });
  const big = await b.api('/mcp', { json: Array.from({ length: 11 }, (_, i) => call(i)), headers });
  assert.equal(big.status, 400);
  assert.match(((await big.json()) as { error: { message: string } }).error.message, /at most 10 JSON-RPC messages/);
  const ok = await b.api('/mcp', { json: Array.from({ length: 3 }, (_, i) => call(i)), headers });
  assert.equal(ok.status, 200);
  const answers = (await ok.json()) as Array<{ id: number; result: CallToolResult }>;
  assert.deepEqual(answers.map((a) => a.id).sort(), [0, 1, 2]);
  assert.deepEqual((await byEndpoint(b))['/ipv6/expand'], 3);
  const huge = await b.api('/mcp', { json: { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { pad: 'x'.repeat(1024 * 1024) } }, headers });
  assert.equal(huge.status, 413);
});

test('in one POST, requests are answered, notifications and responses accepted, anything else refused as JSON-RPC says', async (t) => {
  const b = await server(t);
  const headers = { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' };
  const call = { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'ipv6_expand', arguments: { ipv6: '::1' } } };
  const notification = { jsonrpc: '2.0', method: 'notifications/initialized' };
  const response = { jsonrpc: '2.0', id: 3, result: {} };
  const only = await b.api('/mcp', { json: notification, headers });
  assert.equal(only.status, 202);
  const mixed = await b.api('/mcp', { json: [notification, call, response], headers });
  assert.equal(mixed.status, 200);
  const answers = (await mixed.json()) as Array<{ id: number; result: CallToolResult }>;
  assert.deepEqual(answers.map((a) => a.id), [7]);
  assert.deepEqual(answers[0]!.result.structuredContent, await apiData(b, '/ipv6/expand', { ipv6: '::1' }));
  for (const bad of [{ jsonrpc: '1.0', id: 1, method: 'tools/list' }, [call, { jsonrpc: '2.0', id: 2 }], { jsonrpc: '2.0', id: 1, method: 'tools/list', extra: true }]) {
    const res = await b.api('/mcp', { json: bad, headers });
    assert.equal(res.status, 400, JSON.stringify(bad));
    assert.deepEqual(await res.json(), { jsonrpc: '2.0', error: { code: -32700, message: 'Parse error: Invalid JSON-RPC message' }, id: null });
  }
  const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } };
  const twice = await b.api('/mcp', { json: [init, call], headers });
  assert.equal(twice.status, 400);
  assert.equal(((await twice.json()) as { error: { code: number } }).error.code, -32600);
  // Only the call of the mixed batch was a call; the refused POSTs ran nothing.
  assert.deepEqual((await byEndpoint(b))['/ipv6/expand'], 2);
});

test('work in flight is shared with the API: a probe past the plan\'s limit is a tool error "concurrent"', async (t) => {
  const hanging = hangingConnect();
  const dialer = createDialer({ allowTargets: ['127.0.0.0/8'], dnsServers: [{ host: '127.0.0.1', port: dns.port }] }, { connectFn: hanging.fn });
  const b = await server(t, { plan: 'free', deps: { dialer } });
  const client = await connect(t, b);
  const controller = new AbortController();
  // The free plan's two probes in flight, held by calls of the API itself.
  const held = [1, 2].map(() => b.api('/api/port/scan', { json: { host: '127.0.0.2', port: 80, timeout: 30 }, signal: controller.signal }).catch(() => null));
  await eventually(() => hanging.sockets.length === 2);
  const result = (await client.callTool({ name: 'port_scan', arguments: { host: '127.0.0.2', port: 81 } })) as CallToolResult;
  controller.abort();
  await Promise.all(held);
  assert.equal(result.isError, true);
  assert.match(text(result), /too many probing requests at once for the free plan: at most 2 in flight/);
  assert.equal((result._meta as Record<string, { details: { window: string } }>)['netdiag/error']!.details.window, 'concurrent');
  assert.equal(hanging.sockets.length, 2, 'the refused call dialled nothing');
  // A 429 is no call: the refused one was taken back from the windows (two held calls and this one).
  const next = (await client.callTool({ name: 'ipv6_expand', arguments: { ipv6: '::1' } })) as CallToolResult;
  assert.equal((next._meta as Record<string, { remaining: number; limit: number }>)['netdiag/rate_limit']!.remaining, 10 - 3);
});

test('callers at once, with the same JSON-RPC ids, get their own answers, counted to their own accounts', async (t) => {
  const b = await server(t);
  const { token: other } = await b.accounts.createAccount({ email: 'other@example.com', name: 'Other', plan: 'free' });
  const headers = { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' };
  const batch = (addresses: string[]) => addresses.map((ipv6, i) => ({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'ipv6_expand', arguments: { ipv6 } } }));
  const mine = ['::1', '::2', '::3'];
  const theirs = ['fe80::1', 'fe80::2', 'fe80::3'];
  const sent = Array.from({ length: 4 }, (_, i) =>
    b.api('/mcp', i % 2 === 0 ? { json: batch(mine), headers } : { json: batch(theirs), headers, token: other }),
  );
  for (const [i, res] of (await Promise.all(sent)).entries()) {
    assert.equal(res.status, 200);
    const answers = (await res.json()) as Array<{ id: number; result: CallToolResult }>;
    const expected = i % 2 === 0 ? mine : theirs;
    assert.deepEqual(answers.map((a) => [a.id, (a.result.structuredContent as { ipv6: string }).ipv6]), expected.map((ipv6, id) => [id, ipv6]));
  }
  // Six calls each, under each account.
  assert.equal((await byEndpoint(b))['/ipv6/expand'], 6);
  const res = await b.api('/api/usage/stats', { token: other });
  assert.equal(((await res.json()) as { data: { by_endpoint: Record<string, number> } }).data.by_endpoint['/ipv6/expand'], 6);
});

test('GET /metrics counts tool calls as runs of their tools, and a tool call\'s 429 by its window', async (t) => {
  const token = 'metrics-token-0123456789abcdef';
  // The eleven calls in one minute of the free plan's window (10 a minute), not across two: the clock stands still.
  const b = await server(t, { plan: 'free', env: { NETDIAG_METRICS_TOKEN: token }, deps: { clock: () => new Date(Date.UTC(2026, 5, 1, 12, 0, 15)) } });
  const client = await connect(t, b);
  for (let i = 0; i < 11; i++) await client.callTool({ name: 'ipv6_expand', arguments: { ipv6: '::1' } });
  const metrics = await (await fetch(`${b.url}/metrics`, { headers: { authorization: `Bearer ${token}` } })).text();
  assert.match(metrics, /^netdiag_probes_total\{tool="ipv6_expand",outcome="ok"\} 10$/m);
  assert.match(metrics, /^netdiag_rate_limited_total\{window="minute"\} 1$/m);
});
