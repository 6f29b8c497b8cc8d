import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { once } from 'node:events';
import { tempDir } from './helpers/build.js';
import { serve } from './helpers/serve.js';

test('npm start on an empty database: serves, prints a token once, shuts down gracefully on SIGTERM', async (t) => {
  const dbPath = join(tempDir(t), 'server.db');
  const first = await serve(dbPath, true);
  t.after(() => first.child.kill('SIGKILL'));
  const { port, token } = first;
  assert.ok(token);
  assert.match(first.stdout(), /netdiag account create/);
  assert.match(first.stdout(), new RegExp(`curl -H "Authorization: Bearer ${token}" http://127\\.0\\.0\\.1:${port}/api/user`));
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
  const code = await first.exited;
  assert.equal(code, 0);
  assert.match(answer, /^HTTP\/1\.1 \d{3}/);
  assert.match(answer, /"success":false/);
  socket.destroy();
  assert.ok(!existsSync(`${dbPath}-wal`), 'the database was closed cleanly (WAL checkpointed and removed)');

  // a second start on the same database prints no token
  const second = await serve(dbPath, false);
  t.after(() => second.child.kill('SIGKILL'));
  await new Promise((r) => setTimeout(r, 300));
  assert.doesNotMatch(second.stdout(), /nd_[0-9A-Za-z]{40}/);
  second.child.kill('SIGINT');
  assert.equal(await second.exited, 0);
});
