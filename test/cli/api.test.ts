import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { test, type TestContext } from 'node:test';
import { promisify } from 'node:util';
import { runCli, type CliIo } from '../../src/cli.js';
import { API_COMMANDS } from '../../src/cli/api-commands.js';
import { startDnsServer } from '../fixtures/dns-server.js';
import { build, type Built } from '../helpers/build.js';
import { freePort } from '../helpers/free-port.js';

const bin = new URL('../../bin/netdiag.js', import.meta.url).pathname;
const run = promisify(execFile);

/** `netdiag ...` in this process, against `built` (its URL and token in the environment). */
async function cli(built: Pick<Built, 'url' | 'token'> | null, argv: string[], tty: Partial<CliIo> = {}) {
  let out = '';
  let err = '';
  const env = built ? { NETDIAG_URL: built.url, NETDIAG_TOKEN: built.token } : {};
  const code = await runCli(argv, { env, stdout: (t) => (out += t), stderr: (t) => (err += t), ...tty });
  return { code, out, err };
}

/** Requests to the API that reached the server, counted at its socket (before routing, authentication or limits). */
function countRequests(built: Built): () => number {
  let n = 0;
  // Under /api only: the server asks its own judge (/judge) once at start.
  built.app.server.on('request', (req: { url?: string }) => {
    if (req.url?.startsWith('/api')) n++;
  });
  return () => n;
}

async function listen(t: TestContext, host: string, port: number): Promise<void> {
  const server: Server = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, host, resolve));
  t.after(() => server.close());
}

test('netdiag dns lookup --json prints the API\'s data; on a terminal, a table with TTLs', async (t) => {
  const dns = await startDnsServer({
    records: [
      // TTL 0: neither answer comes from the cache, so the two agree in every field but the time.
      { name: 'mail.example.test', type: 'MX', ttl: 0, data: { preference: 10, exchange: 'mx1.example.test' } },
      { name: 'mail.example.test', type: 'MX', ttl: 0, data: { preference: 20, exchange: 'mx2.example.test' } },
    ],
  });
  t.after(() => dns.close());
  const built = await build(t, { env: { NETDIAG_DNS_SERVERS: `127.0.0.1:${dns.port}` } });

  // Spawned as a user runs it: stdout is a pipe, so JSON is the default too.
  const spawned = await run(process.execPath, [bin, 'dns', 'lookup', 'mail.example.test', '--type', 'mx', '--json'], {
    env: { ...process.env, NETDIAG_URL: built.url, NETDIAG_TOKEN: built.token },
  });
  const printed = JSON.parse(spawned.stdout) as Record<string, unknown>;
  const api = (await (await built.api('/api/dns/lookup', { json: { domain: 'mail.example.test', type: 'MX' } })).json()) as { data: Record<string, unknown> };
  const { response_time: cliTime, ...cliRest } = printed;
  const { response_time: apiTime, ...apiRest } = api.data;
  assert.deepEqual(cliRest, apiRest);
  assert.equal(typeof cliTime, typeof apiTime);
  assert.deepEqual(Object.keys(printed), Object.keys(api.data));
  assert.equal((printed.records as unknown[]).length, 2);

  const table = await cli(built, ['dns', 'lookup', 'mail.example.test', '--type', 'MX'], { stdoutIsTTY: true });
  assert.equal(table.code, 0, table.err);
  assert.match(table.out, /^status +NOERROR$/m);
  assert.match(table.out, /^records:\n +type +ttl +priority +exchange\n +MX +0 +10 +mx1\.example\.test\n +MX +0 +20 +mx2\.example\.test$/m);
  assert.match(table.err, /MX lookup: NOERROR/);
});

test('netdiag port scan-range --async: progress on stderr, the items, then the result', async (t) => {
  // A loopback address of its own, so ports 22 and 80 are ours whatever else runs here.
  const host = `127.${randomInt(1, 255)}.${randomInt(1, 255)}.${randomInt(2, 255)}`;
  await listen(t, host, 22);
  await listen(t, host, 80);
  const built = await build(t, { env: { NETDIAG_ALLOW_TARGETS: '127.0.0.0/8' } });

  // Not a terminal: the result as JSON on stdout, progress and the items shown as lines on stderr.
  const plain = await cli(built, ['port', 'scan-range', host, '--ports', '1-100', '--async']);
  assert.equal(plain.code, 0, plain.err);
  const data = JSON.parse(plain.out) as Array<{ port: number; state: string }>;
  assert.equal(data.length, 100);
  assert.deepEqual(data.filter((i) => i.state === 'open').map((i) => i.port), [22, 80]);
  assert.match(plain.err, /^netdiag: job job_\w{24} (queued|running)/m);
  assert.match(plain.err, /^port=22 state=open service=ssh response_time=[\d.]+$/m);
  assert.match(plain.err, /^port=80 state=open service=http/m);
  assert.match(plain.err, /^netdiag: 100\/100 done$/m);
  const job = /job (job_\w{24})/.exec(plain.err)![1]!;
  const finished = (await (await built.api(`/api/jobs/${job}`)).json()) as { data: { status: string; result: unknown } };
  assert.equal(finished.data.status, 'succeeded');
  assert.deepEqual(finished.data.result, data);

  // On a terminal: a bar redrawn in place, the open ports as they complete, then the table.
  const tty = await cli(built, ['port', 'scan-range', host, '--ports', '1-100', '--async'], { stdoutIsTTY: true, stderrIsTTY: true });
  assert.equal(tty.code, 0, tty.err);
  assert.match(tty.err, /\r\[#{30}\] 100\/100/);
  assert.match(tty.out, /^port=22 state=open service=ssh/m);
  assert.match(tty.out, /^port +state +service +response_time\n22 +open +ssh +[\d.]+\n80 +open +http +[\d.]+\nNot shown: 98 closed ports$/m);
});

test('netdiag: a bad flag exits 2 before any request, naming the flag and the rule, with the usage', async (t) => {
  const built = await build(t);
  const requests = countRequests(built);
  const cases: Array<[string[], RegExp]> = [
    [['port', 'scan-range', '127.0.0.1', '--ports', '1-10', '--colour', 'red'], /Unknown option '--colour'/],
    [['port', 'scan-range', '127.0.0.1', '--ports', '1-10', '--timeout', 'soon'], /--timeout: must be an integer, not "soon"/],
    [['port', 'scan-range', '127.0.0.1', '--ports', '1-10', '--timeout', '99'], /--timeout: must be between 1 and 30/],
    [['port', 'scan-range', '127.0.0.1'], /--ports: is required/],
    [['port', 'scan', '127.0.0.1', '--port', '70000'], /--port: must be between 1 and 65535/],
    [['dns', 'lookup', 'example.com', '--type', 'XX'], /--type: must be one of A, AAAA, MX/],
    [['dns', 'lookup-bulk', '--type', 'MX'], /--domains: is required/],
    [['ip', 'lookup', '192.0.2.1', '--security-check', '--no-security-check'], /contradict/],
    [['ipv6', 'expand', '2001:db8::1', 'extra'], /unexpected argument "extra"/],
    [['usage', 'history', '--days', '400'], /--days: must be between 1 and 365/],
    [['user', '--async'], /--async runs a tool as a job/],
    [['dns', 'lookup', 'example.com', '--webhook-url', 'https://example.com/hook'], /--webhook-url goes with --async/],
    [['dns', 'frobnicate'], /unknown command "dns frobnicate"/],
  ];
  for (const [argv, message] of cases) {
    const r = await cli(built, argv);
    assert.equal(r.code, 2, `${argv.join(' ')}: ${r.err}`);
    assert.match(r.err, message, argv.join(' '));
    assert.match(r.err, /usage: netdiag \w+/, `${argv.join(' ')} prints its usage`);
  }
  const noServer = await cli(null, ['ipv6', 'expand', '2001:db8::1']);
  assert.equal(noServer.code, 2);
  assert.match(noServer.err, /no server: set NETDIAG_URL or pass --url/);
  assert.equal(requests(), 0, 'no request reached the server');

  // The same flags, right, do reach it: ipv6 expand, a GET with a query, and a list.
  assert.deepEqual(JSON.parse((await cli(built, ['ipv6', 'expand', '2001:db8::1'])).out), {
    ipv6: '2001:db8::1',
    expanded: '2001:0db8:0000:0000:0000:0000:0000:0001',
    compressed: '2001:db8::1',
  });
  const history = await cli(built, ['usage', 'history', '--days', '3']);
  assert.equal((JSON.parse(history.out) as unknown[]).length, 3);
  const bulkRun = await cli(built, ['ip', 'lookup-bulk', '192.0.2.1,not-an-ip', '--ips', '10.0.0.1']);
  assert.equal(bulkRun.code, 0, bulkRun.err);
  const bulk = JSON.parse(bulkRun.out) as Array<{ ip: string; error?: string }>;
  assert.deepEqual(bulk.map((i) => i.ip), ['192.0.2.1', 'not-an-ip', '10.0.0.1']);
  assert.match(bulk[1]!.error!, /ips\[1\]/);
  assert.equal(requests(), 3);
});

test('netdiag: a 429 exits 3 with its message; an unreachable server exits 4', async (t) => {
  // A clock that stands still: the ten calls and the eleventh share one minute of the free plan's window.
  const built = await build(t, { plan: 'free', deps: { clock: () => new Date(Date.UTC(2026, 5, 1, 12, 0, 15)) } });
  for (let i = 0; i < 10; i++) assert.equal((await built.api('/api/user')).status, 200);
  const limited = await cli(built, ['user']);
  assert.equal(limited.code, 3, limited.err);
  assert.match(limited.err, /^netdiag: .*free.*10 requests per minute.* \(retry after \d+ s\)$/m);
  assert.equal(limited.out, '');

  const closed = await cli({ url: `http://127.0.0.1:${await freePort()}`, token: built.token }, ['user']);
  assert.equal(closed.code, 4, closed.err);
  assert.match(closed.err, /^netdiag: could not reach http:\/\/127\.0\.0\.1:\d+/m);
});

test('netdiag: a command for every operation of the OpenAPI document; help lists both groups', async (t) => {
  const built = await build(t);
  const doc = (await (await built.api('/api/openapi.json')).json()) as { paths: Record<string, Record<string, unknown>> };
  const routes = Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.keys(methods)
      .filter((m) => ['get', 'post', 'delete'].includes(m))
      .map((m) => `${m.toUpperCase()} ${path.replace(/^\/api/, '')}`),
  );
  const commands = new Set(API_COMMANDS.map((c) => `${c.method} ${c.path}`));
  assert.ok(routes.length > 20);
  assert.deepEqual(routes.filter((r) => !commands.has(r)), [], 'routes of the document without a command');

  const help = await cli(null, ['--help']);
  assert.equal(help.code, 0);
  const diagnostics = help.out.indexOf('Diagnostics');
  const admin = help.out.indexOf('Administration');
  assert.ok(diagnostics >= 0 && admin > diagnostics, help.out);
  assert.match(help.out.slice(diagnostics, admin), /netdiag port scan-range <host> --ports <ports>/);
  assert.match(help.out.slice(diagnostics, admin), /netdiag jobs list/);
  assert.match(help.out.slice(admin), /netdiag account create/);
  const group = await cli(null, ['ip', '--help']);
  assert.match(group.out, /netdiag ip lookup <ip>[\s\S]*netdiag ip my-ip/);
  const command = await cli(null, ['help', 'ip', 'lookup']);
  assert.match(command.out, /--security-check, --no-security-check +add Tor exit.*\(default false\)/);
  assert.match((await cli(null, ['port', 'scan', '--help'])).out, /--timeout <integer 1-30> +connect timeout of the port, seconds \(default 5\)/);
});

test('netdiag http check --url: the flag is the URL to check, the server comes from NETDIAG_URL', async (t) => {
  const target = createServer((socket) => socket.resume().end('HTTP/1.1 204 No Content\r\nconnection: close\r\n\r\n'));
  await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
  t.after(() => target.close());
  const checked = `http://127.0.0.1:${(target.address() as AddressInfo).port}/`;
  const built = await build(t, { env: { NETDIAG_ALLOW_TARGETS: '127.0.0.0/8' } });
  for (const argv of [['http', 'check', '--url', checked, '--json'], ['http', 'check', checked, '--json']]) {
    const r = await cli(built, argv);
    assert.equal(r.code, 0, r.err);
    const data = JSON.parse(r.out) as { url: string; status: number };
    assert.deepEqual([data.url, data.status], [checked, 204], argv.join(' '));
  }
  const noServer = await cli(null, ['http', 'check', '--url', checked]);
  assert.equal(noServer.code, 2);
  assert.match(noServer.err, /no server: set NETDIAG_URL \(here --url is the URL to check\)/);
});
