import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { once } from 'node:events';
import { tempDir } from './helpers/build.js';

const bin = new URL('../bin/netdiag.js', import.meta.url).pathname;

function start(dbPath: string): { child: ChildProcess; ready: Promise<{ port: number; token: string | null; stdout: string }> } {
  const child = spawn(process.execPath, [bin, 'serve'], {
    env: { ...process.env, DATABASE_URL: `sqlite:${dbPath}`, PORT: '0', HOST: '127.0.0.1', NETDIAG_DNS_SERVERS: '127.0.0.1:1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  const ready = new Promise<{ port: number; token: string | null; stdout: string }>((resolve, reject) => {
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      const port = /listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(stdout)?.[1];
      if (port) resolve({ port: Number(port), token: /\b(nd_[0-9A-Za-z]+)/.exec(stdout)?.[1] ?? null, stdout });
    });
    child.once('exit', (code) => reject(new Error(`server exited with ${code} before listening: ${stdout}`)));
  });
  return { child, ready };
}

test('npm start on an empty database: serves, prints a token once, shuts down gracefully on SIGTERM', async (t) => {
  const dbPath = join(tempDir(t), 'server.db');
  const first = start(dbPath);
  t.after(() => first.child.kill('SIGKILL'));
  const { port, token, stdout } = await first.ready;
  assert.ok(token, `no token printed: ${stdout}`);
  assert.match(stdout, /netdiag account create/);
  const res = await fetch(`http://127.0.0.1:${port}/api/user`, { headers: { authorization: `Bearer ${token}` } });
  assert.equal(res.status, 200);
  assert.equal(((await res.json()) as { data: { email: string } }).data.email, 'admin@localhost');

  // a request still arriving when SIGTERM lands is answered before the process exits
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  const body = '{"domain": "example.com"}';
  socket.write(`POST /api/user HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`);
  await new Promise((r) => setTimeout(r, 100));
  first.child.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 200));
  let answer = '';
  socket.setEncoding('utf8').on('data', (c: string) => (answer += c));
  socket.write(body.slice(5));
  const [code] = (await once(first.child, 'exit')) as [number];
  assert.equal(code, 0);
  assert.match(answer, /^HTTP\/1\.1 \d{3}/);
  assert.match(answer, /"success":false/);
  socket.destroy();
  assert.ok(!existsSync(`${dbPath}-wal`), 'the database was closed cleanly (WAL checkpointed and removed)');

  // a second start on the same database prints no token
  const second = start(dbPath);
  t.after(() => second.child.kill('SIGKILL'));
  const again = await second.ready;
  assert.equal(again.token, null);
  second.child.kill('SIGINT');
  assert.equal(((await once(second.child, 'exit')) as [number])[0], 0);
});
