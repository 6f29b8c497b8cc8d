import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { test, type TestContext } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { OPERATIONS } from '../../src/operations/index.js';
import { toolNameOf } from '../../src/operations/names.js';
import { build } from '../helpers/build.js';
import { closedPort } from '../infra/net/fixtures/connect-spy.js';

/** `netdiag mcp` as a desktop agent runs it: a child process spoken to over stdio by the SDK's client. */

const BIN = fileURLToPath(new URL('../../bin/netdiag.js', import.meta.url));

async function stdioClient(t: TestContext, env: Record<string, string>): Promise<Client> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp'], env: { PATH: process.env.PATH ?? '', ...env }, stderr: 'pipe' });
  const client = new Client({ name: 'netdiag-test', version: '1.0.0' });
  await client.connect(transport);
  t.after(() => client.close());
  return client;
}

test('netdiag mcp lists the tools and forwards a call to the server, counted there', async (t) => {
  const b = await build(t);
  const client = await stdioClient(t, { NETDIAG_URL: b.url, NETDIAG_TOKEN: b.token });
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((x) => x.name).sort(), OPERATIONS.map((op) => toolNameOf(op.path)).sort());

  const result = (await client.callTool({ name: 'ipv6_expand', arguments: { ipv6: 'fe80::1' } })) as CallToolResult;
  const res = await b.api('/api/ipv6/expand', { json: { ipv6: 'fe80::1' } });
  assert.deepEqual(result.structuredContent, ((await res.json()) as { data: unknown }).data);
  assert.equal((result.content[0] as { text: string }).text, 'address expanded');

  const bad = (await client.callTool({ name: 'port_scan', arguments: { host: 'example.com', port: 0 } })) as CallToolResult;
  assert.equal(bad.isError, true);
  assert.equal((bad.content[0] as { text: string }).text, 'port: must be between 1 and 65535');

  const stats = (await (await b.api('/api/usage/stats')).json()) as { data: { by_endpoint: Record<string, number> } };
  assert.equal(stats.data.by_endpoint['/ipv6/expand'], 2);
  assert.equal(stats.data.by_endpoint['/port/scan'], 1);
});

test('a server that cannot be reached is a tool error saying so', async (t) => {
  const port = await closedPort('127.0.0.1');
  const client = await stdioClient(t, { NETDIAG_URL: `http://127.0.0.1:${port}`, NETDIAG_TOKEN: 'nd_' + 'a'.repeat(40) });
  const result = (await client.callTool({ name: 'ipv6_expand', arguments: { ipv6: '::1' } })) as CallToolResult;
  assert.equal(result.isError, true);
  assert.match((result.content[0] as { text: string }).text, /could not be reached/);
});

test('without NETDIAG_TOKEN it exits 2 before serving', () => {
  const run = spawnSync(process.execPath, [BIN, 'mcp'], { env: { PATH: process.env.PATH ?? '', NETDIAG_URL: 'http://127.0.0.1:1' }, input: '', encoding: 'utf8' });
  assert.equal(run.status, 2, run.stderr);
  assert.match(run.stderr, /no token: set NETDIAG_TOKEN/);
  assert.equal(run.stdout, '');
});
