import assert from 'node:assert/strict';
import net from 'node:net';
import { once } from 'node:events';
import { test, type TestContext } from 'node:test';
import { LINGER_MAX_BYTES, LINGER_MAX_MS } from '../../../src/http/plugins/lingering-close.js';
import { BODY_LIMIT_BYTES } from '../../../src/http/limits.js';
import { build, type Built } from '../../helpers/build.js';
import { eventually } from '../../helpers/eventually.js';
import { parseRaw, type RawResponse } from '../../helpers/raw-http.js';

const UPLOAD_BYTES = 1_100_000;
const CHUNK_BYTES = 16 * 1024;

interface Upload {
  response: RawResponse;
  /** Body bytes the client managed to hand to its socket before it closed. */
  sent: number;
  error: string | undefined;
}

/**
 * A client that sends its whole body before it looks at the answer (as a script on a blocking
 * socket does), in chunks, each after the last was taken; then reads until the server closes.
 */
function upload(port: number, head: string, size: number): Promise<Upload> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    const chunks: Buffer[] = [];
    let sent = 0;
    let error: string | undefined;
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.on('error', (e: NodeJS.ErrnoException) => (error = e.code ?? e.message));
    socket.on('close', () => resolve({ response: parseRaw(Buffer.concat(chunks).toString('latin1')), sent, error }));
    socket.on('connect', async () => {
      socket.write(head);
      const chunk = Buffer.alloc(CHUNK_BYTES, 'x');
      while (sent < size && !socket.destroyed) {
        const n = Math.min(CHUNK_BYTES, size - sent);
        const more = socket.write(chunk.subarray(0, n));
        sent += n;
        if (!more) await drained(socket);
        await new Promise((r) => setImmediate(r));
      }
      if (!socket.destroyed) socket.end();
    });
  });
}

/** Resolves once the socket takes writes again, or is gone. */
function drained(socket: net.Socket): Promise<void> {
  if (socket.destroyed || !socket.writableNeedDrain) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      socket.off('drain', done);
      socket.off('close', done);
      resolve();
    };
    socket.on('drain', done);
    socket.on('close', done);
  });
}

function head(path: string, headers: Record<string, string>): string {
  return `POST ${path} HTTP/1.1\r\nhost: netdiag.test\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`;
}

/** The 413 envelope, whole: its Content-Length of body arrived, and the connection was closed by the server. */
function assertWhole413(u: Upload, what: string): void {
  assert.equal(u.error, undefined, `${what}: the client saw ${u.error} after sending ${u.sent} bytes`);
  assert.equal(u.sent, UPLOAD_BYTES, `${what}: the whole body was taken`);
  assert.equal(u.response.status, 413, `${what}: ${u.response.raw.slice(0, 200)}`);
  assert.equal(u.response.headers.connection, 'close', what);
}

test('8 of 8 uploads of 1.1 MB get the whole 413, on the API, MCP and the dashboard, with or without Expect: 100-continue', async (t) => {
  const b = await build(t);
  const port = Number(new URL(b.url).port);
  const auth = { authorization: `Bearer ${b.token}` };
  const routes = [
    { what: 'API', path: '/api/port/scan', headers: { ...auth, 'content-type': 'application/json' }, json: true },
    { what: 'MCP', path: '/mcp', headers: { ...auth, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, json: true },
    { what: 'dashboard', path: '/login', headers: { 'content-type': 'application/x-www-form-urlencoded' }, json: false },
  ];
  for (const route of routes) {
    for (let i = 0; i < 8; i++) {
      const expect: Record<string, string> = i % 2 === 1 ? { expect: '100-continue' } : {};
      const u = await upload(port, head(route.path, { ...route.headers, ...expect, 'content-length': String(UPLOAD_BYTES) }), UPLOAD_BYTES);
      const what = `${route.what} upload ${i + 1}${i % 2 === 1 ? ' (Expect: 100-continue)' : ''}`;
      if (i % 2 === 1) assert.match(u.response.raw, /^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 413 /, what);
      // The first answer of the exchange is the 100 with Expect: the 413 after it.
      const response = i % 2 === 1 ? parseRaw(u.response.raw.slice(u.response.raw.indexOf('\r\n\r\n') + 4)) : u.response;
      assertWhole413({ ...u, response }, what);
      assert.equal(Buffer.byteLength(response.body, 'latin1'), Number(response.headers['content-length']), what);
      if (route.json) {
        const body = JSON.parse(response.body) as { success: boolean; error: string; details: { limit: number } };
        assert.deepEqual([body.success, body.error, body.details.limit], [false, 'payload_too_large', BODY_LIMIT_BYTES], what);
      }
    }
  }
  // A body without Content-Length (chunked) that grows past the limit: the same.
  const chunkedHead = head('/api/port/scan', { ...auth, 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
  const u = await new Promise<Upload>((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    const chunks: Buffer[] = [];
    let sent = 0;
    let error: string | undefined;
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.on('error', (e: NodeJS.ErrnoException) => (error = e.code));
    socket.on('close', () => resolve({ response: parseRaw(Buffer.concat(chunks).toString('latin1')), sent, error }));
    socket.on('connect', async () => {
      socket.write(chunkedHead);
      const piece = `${CHUNK_BYTES.toString(16)}\r\n${'x'.repeat(CHUNK_BYTES)}\r\n`;
      while (sent < UPLOAD_BYTES && !socket.destroyed) {
        if (!socket.write(piece)) await drained(socket);
        sent += CHUNK_BYTES;
        await new Promise((r) => setImmediate(r));
      }
      sent = Math.min(sent, UPLOAD_BYTES);
      socket.end('0\r\n\r\n');
    });
  });
  assertWhole413(u, 'chunked upload');
});

/** A raw socket to a fresh server, half-open allowed, everything it receives kept in `chunks`. */
async function rawClient(t: TestContext): Promise<{ b: Built; socket: net.Socket; chunks: Buffer[] }> {
  const b = await build(t);
  const port = Number(new URL(b.url).port);
  const socket = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true });
  t.after(() => socket.destroy());
  const chunks: Buffer[] = [];
  socket.on('data', (d: Buffer) => chunks.push(d));
  socket.on('error', () => undefined);
  await once(socket, 'connect');
  return { b, socket, chunks };
}

test('a client that never stops sending is cut once it has sent LINGER_MAX_BYTES more, after it was given the 413', async (t) => {
  const { b, socket, chunks } = await rawClient(t);
  socket.write(head('/api/port/scan', { authorization: `Bearer ${b.token}`, 'content-type': 'application/json', 'transfer-encoding': 'chunked' }));
  const piece = `${(64 * 1024).toString(16)}\r\n${'x'.repeat(64 * 1024)}\r\n`;
  let sent = 0;
  // Gives up (and fails) at three times the bound.
  while (!socket.destroyed && sent < 3 * LINGER_MAX_BYTES) {
    if (!socket.write(piece)) await drained(socket);
    sent += piece.length;
    await new Promise((r) => setImmediate(r));
  }
  await eventually(() => socket.destroyed, { what: 'the server cut the endless body' });
  assert.ok(sent > LINGER_MAX_BYTES, `cut after ${sent} bytes: the 413 was not given time to be read`);
  assert.ok(sent < 3 * LINGER_MAX_BYTES, `still taking bytes after ${sent}`);
  assert.equal(parseRaw(Buffer.concat(chunks).toString('latin1')).status, 413);
});

test('a client that trickles its body is cut after LINGER_MAX_MS, after it was given the 413', async (t) => {
  const { b, socket, chunks } = await rawClient(t);
  socket.write(head('/api/port/scan', { authorization: `Bearer ${b.token}`, 'content-type': 'application/json', 'content-length': String(UPLOAD_BYTES) }));
  let trickled = 0;
  const trickle = setInterval(() => socket.writable && socket.write('x', () => trickled++), 50);
  t.after(() => clearInterval(trickle));
  await eventually(() => chunks.length > 0, { what: 'the 413' });
  assert.equal(parseRaw(Buffer.concat(chunks).toString('latin1')).status, 413);
  // Twenty more bytes sent after the answer, and the connection still takes them.
  const after = trickled;
  await eventually(() => socket.destroyed || trickled >= after + 20, { what: 'twenty more bytes sent' });
  assert.equal(socket.destroyed, false, 'still open while the client sends');
  await eventually(() => socket.destroyed, { timeoutMs: 3 * LINGER_MAX_MS, what: 'the server cut the trickle' });
});
