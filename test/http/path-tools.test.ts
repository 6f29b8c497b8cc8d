import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createClient } from '../../clients/typescript/src/index.js';
import { runCli } from '../../src/cli.js';
import { loadConfig } from '../../src/config.js';
import { createDialer } from '../../src/infra/net/dialer.js';
import { createPathTools, type SpawnFn } from '../../src/infra/path/index.js';
import { build, type Built } from '../helpers/build.js';
import { finishedJob } from '../helpers/jobs.js';
import { createLab, LAB_V4, LAB_V6, labUnavailable, type Lab } from '../helpers/netns.js';

/**
 * POST /api/ping, /api/traceroute and /api/mtr through every surface, on a real routed network:
 * four network namespaces (test/helpers/netns.ts), client -> r1 -> r2 -> target, the programs
 * run in the client's namespace, the server itself on 127.0.0.1 with NETDIAG_ALLOW_TARGETS
 * opening exactly the lab's ranges. The truth is the topology: the hops are r1, r2 and the target.
 * What the server refuses (a forbidden target, a bound, shell metacharacters) starts no process.
 */

const PROGRAMS = ['/usr/bin/ping', ['/usr/sbin/traceroute', '/usr/bin/traceroute'].find(existsSync) ?? '/usr/sbin/traceroute', '/usr/bin/mtr'];
const missing = PROGRAMS.filter((p) => !existsSync(p));
const skip = labUnavailable() ?? (missing.length ? `needs ${missing.join(', ')} (Debian packages iputils-ping, traceroute, mtr-tiny)` : null);
const ALLOW = '10.200.0.0/16,fd00:200::/32';
const HOPS = { 4: [LAB_V4.r1, LAB_V4.r2, LAB_V4.target], 6: [LAB_V6.r1, LAB_V6.r2, LAB_V6.target] };

interface Hop {
  ttl: number;
  address: string | null;
  rtts?: Array<number | null>;
  loss_percent?: number;
}

describe('path tools over HTTP, MCP and the CLI on a routed namespace network', { skip: skip ?? false }, () => {
  let lab: Lab;
  let b: Built;
  const spawned: Array<{ file: string; args: readonly string[] }> = [];
  before(async () => {
    lab = await createLab();
  });
  after(() => lab?.destroy());

  /** One server for the suite, its path tools running the programs in the lab's client namespace. */
  const server = async (t: import('node:test').TestContext): Promise<Built> => {
    const env = { NETDIAG_ALLOW_TARGETS: ALLOW };
    const dialer = createDialer(loadConfig({ ...env, NETDIAG_DNS_SERVERS: '127.0.0.1:1' }));
    const inClient = lab.spawnIn('client');
    const spawn: SpawnFn = (file, args, options): ChildProcess => {
      spawned.push({ file, args });
      return inClient(file, args, options);
    };
    const path = createPathTools({ dialer, runner: { spawn } });
    return build(t, { env, deps: { dialer, path } });
  };

  test('traceroute answers the hops in order, synchronously, over icmp, udp and tcp, IPv4 and IPv6', async (t) => {
    b = await server(t);
    for (const family of [4, 6] as const) {
      const target = HOPS[family][2]!;
      for (const protocol of ['icmp', 'udp', 'tcp']) {
        const res = await b.api('/api/traceroute', { json: { target, protocol, queries: 1 } });
        const body = (await res.json()) as { success: boolean; data: { reached: boolean; address: string; protocol: string; hops: Hop[] }; message: string };
        assert.equal(res.status, 200, JSON.stringify(body));
        assert.equal(body.data.reached, true, `${protocol} v${family}`);
        assert.deepEqual(body.data.hops.map((h) => h.address), HOPS[family], `${protocol} v${family}: the routers, then the target`);
        assert.deepEqual(body.data.hops.map((h) => h.ttl), [1, 2, 3]);
        assert.match(body.message, /reached in 3 hops/);
      }
    }
  });

  test('ping and mtr: synchronously, and as jobs whose items are the samples and the hops', async (t) => {
    b = await server(t);
    const ping = await b.api('/api/ping', { json: { target: LAB_V4.target, packets: 3 } });
    const pinged = (await ping.json()) as { data: { sent: number; received: number; loss_percent: number; samples: unknown[] } };
    assert.equal(ping.status, 200);
    assert.deepEqual([pinged.data.sent, pinged.data.received, pinged.data.loss_percent, pinged.data.samples.length], [3, 3, 0, 3]);

    const accepted = await b.api('/api/mtr', { json: { target: LAB_V6.target, packets: 2 }, headers: { prefer: 'respond-async' } });
    assert.equal(accepted.status, 202);
    const { data } = (await accepted.json()) as { data: { id: string } };
    const { job } = await finishedJob<{ hops: Hop[] }>(b.api, data.id);
    assert.equal(job.status, 'succeeded');
    // max_hops was the bound; the path had three.
    assert.deepEqual(job.progress, { done: 3, total: 3 });
    assert.deepEqual(job.result.hops.map((h) => [h.address, h.loss_percent]), HOPS[6].map((a) => [a, 0]));
    // The job's stream: each hop an item, then the job.
    const stream = await (await b.api(`/api/jobs/${data.id}`, { headers: { accept: 'application/x-ndjson' } })).text();
    const lines = stream.trim().split('\n').map((l) => JSON.parse(l) as { index?: number; item?: Hop; status?: string });
    assert.deepEqual(lines.filter((l) => l.item !== undefined).map((l) => [l.index, l.item!.address]), HOPS[6].map((a, i) => [i, a]), stream.slice(0, 600));
    assert.equal(lines.at(-1)!.status, 'succeeded');

    const pingJob = await b.api('/api/ping', { json: { target: LAB_V6.target, packets: 2 }, headers: { prefer: 'respond-async' } });
    const pid = ((await pingJob.json()) as { data: { id: string } }).data.id;
    const pinged6 = await finishedJob<{ received: number; samples: Array<{ seq: number } | null> }>(b.api, pid);
    assert.equal(pinged6.job.result.received, 2);
    assert.deepEqual(pinged6.job.result.samples.map((s) => s?.seq), [1, 2]);
  });

  test('a forbidden target, a bound and shell metacharacters are refused before any process starts', async (t) => {
    b = await server(t);
    // The availability check runs the programs once; after it, nothing refused may run one.
    await b.api('/api/ping', { json: { target: LAB_V4.r1, packets: 1 } });
    const before = spawned.length;
    const refusals: Array<[string, unknown, number, string]> = [
      ['/api/traceroute', { target: '127.0.0.1' }, 403, 'target_forbidden'],
      ['/api/ping', { target: '169.254.169.254' }, 403, 'target_forbidden'],
      ['/api/mtr', { target: '::1' }, 403, 'target_forbidden'],
      ['/api/traceroute', { target: LAB_V4.target, max_hops: 31 }, 400, 'validation_error'],
      ['/api/ping', { target: LAB_V4.target, packets: 17 }, 400, 'validation_error'],
      ['/api/mtr', { target: LAB_V4.target, protocol: 'sctp' }, 400, 'validation_error'],
      ['/api/ping', { target: LAB_V4.target, ip_version: 5 }, 400, 'validation_error'],
      ['/api/traceroute', { target: `${LAB_V4.target}; reboot` }, 400, 'validation_error'],
      ['/api/ping', { target: '$(reboot)' }, 400, 'validation_error'],
      ['/api/mtr', { target: '`id`.example' }, 400, 'validation_error'],
      ['/api/traceroute', { target: '-p 22 10.200.3.2' }, 400, 'validation_error'],
    ];
    for (const [path, json, status, error] of refusals) {
      for (const prefer of [undefined, 'respond-async']) {
        const res = await b.api(path, { json, headers: prefer ? { prefer } : {} });
        const body = (await res.json()) as { error: string; message: string };
        assert.equal(res.status, status, `${path} ${JSON.stringify(json)}${prefer ? ' as a job' : ''}: ${body.message}`);
        assert.equal(body.error, error);
      }
    }
    assert.deepEqual(spawned.slice(before), [], 'no program ran for what was refused');
  });

  test('the CLI prints each tool\'s table, MCP\'s tools and the TypeScript client answer the API\'s data', async (t) => {
    b = await server(t);
    const cli = async (argv: string[]): Promise<string> => {
      let out = '';
      const code = await runCli(argv, { env: { NETDIAG_URL: b.url, NETDIAG_TOKEN: b.token }, stdout: (s) => (out += s), stderr: () => undefined, stdoutIsTTY: true });
      assert.equal(code, 0, `netdiag ${argv.join(' ')}: ${out}`);
      return out;
    };
    const traced = await cli(['traceroute', LAB_V4.target, '--queries', '1']);
    for (const [i, address] of HOPS[4].entries()) assert.match(traced, new RegExp(`^\\s*${i + 1}\\s+${address.replaceAll('.', '\\.')}\\b`, 'm'), traced);
    const mtrOut = await cli(['mtr', LAB_V4.target, '--packets', '1']);
    for (const address of HOPS[4]) assert.ok(mtrOut.includes(address), mtrOut);
    assert.match(await cli(['ping', LAB_V4.target, '--packets', '2']), /^sent\s+2\nreceived\s+2$/m);
    // --json: the API's data.
    const json = JSON.parse(await cli(['ping', LAB_V6.target, '--packets', '1', '--json'])) as { received: number; address: string };
    assert.deepEqual([json.received, json.address], [1, LAB_V6.target]);

    const transport = new StreamableHTTPClientTransport(new URL('/mcp', b.url), { requestInit: { headers: { authorization: `Bearer ${b.token}` } } });
    const client = new Client({ name: 'netdiag-test', version: '1.0.0' });
    await client.connect(transport);
    t.after(() => client.close());
    const call = async (name: string, args: Record<string, unknown>) => {
      const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
      assert.ok(!result.isError, `${name}: ${JSON.stringify(result.content)}`);
      return result.structuredContent as { reached?: boolean; hops?: Hop[]; received?: number };
    };
    const data = await call('traceroute', { target: LAB_V6.target, protocol: 'udp', queries: 1 });
    assert.equal(data.reached, true);
    assert.deepEqual(data.hops!.map((h) => h.address), HOPS[6]);
    assert.deepEqual((await call('mtr', { target: LAB_V4.target, packets: 1 })).hops!.map((h) => h.address), HOPS[4]);
    assert.equal((await call('ping', { target: LAB_V4.target, packets: 1 })).received, 1);

    const netdiag = createClient({ baseUrl: b.url, token: b.token });
    assert.deepEqual((await netdiag.traceroute({ target: LAB_V4.target, protocol: 'tcp', queries: 1 })).data.hops.map((h) => h.address), HOPS[4]);
    assert.equal((await netdiag.ping({ target: LAB_V4.target, packets: 1 })).data.received, 1);
    assert.deepEqual((await netdiag.mtr({ target: LAB_V6.target, packets: 1 })).data.hops.map((h) => h.loss_percent), [0, 0, 0]);
  });
});

test('a path tool missing here: its calls answer 503 naming it, /readyz says which tools run, the rest of the service answers', async (t) => {
  const env = { NETDIAG_ALLOW_TARGETS: '127.0.0.0/8' };
  const dialer = createDialer(loadConfig({ ...env, NETDIAG_DNS_SERVERS: '127.0.0.1:1' }));
  const spawned: string[] = [];
  // Every program is at a path where nothing is: nothing can be started.
  const nowhere = '/nonexistent/netdiag-test';
  const path = createPathTools({
    dialer,
    runner: {
      programs: { ping: `${nowhere}/ping`, traceroute: `${nowhere}/traceroute`, mtr: `${nowhere}/mtr` },
      spawn: (file) => {
        spawned.push(file);
        throw Object.assign(new Error(`spawn ${file} ENOENT`), { code: 'ENOENT' });
      },
    },
  });
  const b = await build(t, { env, deps: { dialer, path } });
  for (const [route, tool] of [['/api/ping', 'ping'], ['/api/traceroute', 'traceroute'], ['/api/mtr', 'mtr']] as const) {
    for (const prefer of [undefined, 'respond-async']) {
      const res = await b.api(route, { json: { target: '127.0.0.1' }, headers: prefer ? { prefer } : {} });
      const body = (await res.json()) as { error: string; message: string };
      assert.equal(res.status, 503, `${route}${prefer ? ' as a job' : ''}`);
      assert.equal(body.error, 'service_unavailable');
      assert.match(body.message, new RegExp(`\\b${tool}\\b`), body.message);
      assert.ok(res.headers.get('retry-after'), 'a Retry-After');
    }
  }
  const ready = (await (await fetch(`${b.url}/readyz`)).json()) as { status: string; path_tools: Record<string, { available: boolean; reason: string | null }> };
  assert.equal(ready.status, 'ready');
  for (const tool of ['ping', 'traceroute', 'mtr']) {
    assert.equal(ready.path_tools[tool]!.available, false, tool);
    assert.match(ready.path_tools[tool]!.reason ?? '', /not installed|not found|could not/i, `${tool}: ${ready.path_tools[tool]!.reason}`);
  }
  // The rest of the service is unaffected.
  const expand = await b.api('/api/ipv6/expand', { json: { ipv6: '2001:db8::1' } });
  assert.equal(expand.status, 200);
});
