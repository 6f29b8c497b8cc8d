import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { once } from 'node:events';
import { tempDir } from './helpers/build.js';
import { serve } from './helpers/serve.js';
import { eventually } from './helpers/eventually.js';

// own process: servers it starts and signals (scripts/test-tree.mjs).

// Each test starts servers of its own on a database of its own: they run at once.
describe('netdiag serve', { concurrency: true }, () => {
  test('npm start on an empty database: serves, prints a token once, shuts down gracefully on SIGTERM', async (t) => {
    const dbPath = join(tempDir(t), 'server.db');
    const first = await serve(dbPath, true);
    t.after(() => first.child.kill('SIGKILL'));
    const { port, token } = first;
    assert.ok(token);
    assert.match(first.stdout(), /netdiag account create/);
    assert.match(first.stdout(), /Lost the link\? On this machine: npx netdiag account reset-password --email admin@localhost/);
    // The first admin's one-time link opens the dashboard's set-password form.
    const link = new RegExp(`http://127\\.0\\.0\\.1:${port}/set-password\\?token=[A-Za-z0-9_-]{43}`).exec(first.stdout())?.[0];
    assert.ok(link, 'a one-time link to set the admin password is printed');
    const page = await fetch(link);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /Set your password/);
    assert.match(first.stdout(), new RegExp(`curl -H "Authorization: Bearer ${token}" http://127\\.0\\.0\\.1:${port}/api/user`));
    const res = await fetch(`http://127.0.0.1:${port}/api/user`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as { data: { email: string } }).data.email, 'admin@localhost');

    // a request still arriving when SIGTERM lands is answered before the process exits
    const socket = connect(port, '127.0.0.1');
    await once(socket, 'connect');
    const body = '{"domain": "example.com"}';
    let answer = '';
    socket.setEncoding('utf8').on('data', (c: string) => (answer += c));
    // Expect: 100-continue: the server's interim answer says it has the headers, and the request is in flight.
    socket.write(`POST /api/user HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n${body.slice(0, 5)}`);
    await eventually(() => answer.includes('\r\n\r\n'), { what: 'the 100 Continue' });
    assert.match(answer, /^HTTP\/1\.1 100 Continue\r\n\r\n$/);
    answer = '';
    first.child.kill('SIGTERM');
    await eventually(() => first.stdout().includes('shutting down'), { what: 'the shutdown under way' });
    socket.write(body.slice(5));
    const code = await first.exited;
    assert.equal(code, 0);
    assert.match(answer, /^HTTP\/1\.1 \d{3}/);
    assert.match(answer, /"success":false/);
    socket.destroy();
    assert.ok(!existsSync(`${dbPath}-wal`), 'the database was closed cleanly (WAL checkpointed and removed)');

    // a second start on the same database prints no token, from its start to its exit
    const second = await serve(dbPath, false);
    t.after(() => second.child.kill('SIGKILL'));
    second.child.kill('SIGINT');
    assert.equal(await second.exited, 0);
    assert.match(second.stdout(), /shutting down/, 'its whole output, to the end');
    assert.doesNotMatch(second.stdout(), /nd_[0-9A-Za-z]{40}/);
    assert.doesNotMatch(second.stdout(), /set-password/);
  });

  test('the request log: one pino JSON line per request, with no token or header in it', async (t) => {
    const dbPath = join(tempDir(t), 'log.db');
    const server = await serve(dbPath, true);
    t.after(() => server.child.kill('SIGKILL'));
    const { port, token } = server;
    const base = `http://127.0.0.1:${port}`;
    const sent = [
      await fetch(`${base}/api/user`, { headers: { authorization: `Bearer ${token}`, cookie: 'secret-cookie' } }),
      await fetch(`${base}/api/user`, { headers: { authorization: 'Bearer nd_wrongwrongwrongwrongwrongwrongwrongwrong' } }),
      await fetch(`${base}/healthz?probe=1`),
    ].map((r) => r.status);
    assert.deepEqual(sent, [200, 401, 200]);
    server.child.kill('SIGTERM');
    assert.equal(await server.exited, 0);

    const out = server.stdout();
    const lines = out
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      // The server's own call to its judge at start (learning its address) is logged too.
      .filter((l) => l.msg === 'request' && !String(l.path).startsWith('/judge/'));
    assert.deepEqual(
      lines.map((l) => [l.method, l.path, l.status]),
      [
        ['GET', '/api/user', 200],
        ['GET', '/api/user', 401],
        ['GET', '/healthz', 200],
      ],
    );
    assert.ok(lines.every((l) => typeof l.ms === 'number' && typeof l.reqId === 'string'));
    assert.equal(lines[0]!.account, 1);
    // The token appears once on stdout: where the first start prints it, never in the log.
    assert.equal(out.split(token!).length - 1, 2, 'the token is printed in the welcome text only (itself and its curl line)');
    const logLines = out.split('\n').filter((l) => l.startsWith('{'));
    for (const line of logLines) {
      assert.ok(!line.includes(token!), 'no token in a log line');
      assert.doesNotMatch(line, /nd_wrong|secret-cookie|authorization|cookie/i);
    }
  });

  test('the start-up line states the effective configuration, without passwords (issue 16)', async (t) => {
    const dbPath = join(tempDir(t), 'config.db');
    const server = await serve(dbPath, true, {
      REDIS_URL: 'redis://:secret@127.0.0.1:1/0',
      NETDIAG_ALLOW_TARGETS: '10.9.0.0/16',
      NETDIAG_TRUST_PROXY: '127.0.0.1',
      NETDIAG_JUDGE_URL: 'http://judge.example/judge',
      NETDIAG_WHOIS_SERVER: 'whois.example:4343',
      NETDIAG_SHUTDOWN_GRACE_S: '7',
    });
    t.after(() => server.child.kill('SIGKILL'));
    // The line is logged before the token is printed; pino writes out what is pending at exit.
    server.child.kill('SIGTERM');
    assert.equal(await server.exited, 0);
    const line = /^\{.*"msg":"effective configuration"\}$/m.exec(server.stdout())?.[0];
    assert.ok(line, server.stdout());

    const { config } = JSON.parse(line) as { config: Record<string, unknown> };
    assert.equal(config.database, `sqlite:${dbPath}`);
    assert.equal(config.redis, 'redis://:***@127.0.0.1:1/0');
    assert.deepEqual(config.allowTargets, ['10.9.0.0/16']);
    assert.deepEqual(config.trustProxy, ['127.0.0.1/32']);
    assert.equal(config.judgeUrl, 'http://judge.example/judge');
    assert.deepEqual(config.dnsServers, ['127.0.0.1:1']);
    assert.equal(config.whoisServer, 'whois.example:4343');
    assert.deepEqual(config.timeoutsS, { headers: 10, request: 30, keepAlive: 72 });
    assert.equal(config.shutdownGraceS, 7);
    assert.ok(!server.stdout().includes('secret'), 'the Redis password appears nowhere in the output');
  });

  test('LOG_FORMAT=pretty: readable log lines instead of JSON (a terminal gets them by default)', async (t) => {
    const server = await serve(join(tempDir(t), 'pretty.db'), true, { LOG_FORMAT: 'pretty' });
    t.after(() => server.child.kill('SIGKILL'));
    server.child.kill('SIGTERM');
    assert.equal(await server.exited, 0);
    const logLines = server.stdout().split('\n').filter((l) => /^\[\d\d:\d\d:\d\d\.\d{3}\] [A-Z]+: /.test(l));
    assert.ok(logLines.some((l) => /INFO: Server listening at http:\/\/127\.0\.0\.1:\d+$/.test(l)), server.stdout());
    assert.ok(logLines.some((l) => /INFO: effective configuration \{"config":\{"database":"sqlite:/.test(l)), server.stdout());
    assert.ok(!server.stdout().split('\n').some((l) => l.startsWith('{')), 'no JSON line');
  });
});
