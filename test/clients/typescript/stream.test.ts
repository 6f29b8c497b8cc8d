import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readLines } from '../../../clients/typescript/src/body.js';
import { createClient, NetdiagConnectionError, NetdiagError, type JobEvent } from '../../../clients/typescript/src/index.js';
import { build } from '../../helpers/build.js';
import { closedPort } from '../../infra/net/fixtures/connect-spy.js';

/**
 * What the client does with what a server sends on a job's stream: lines split wherever the
 * chunks fall, a stream's own error line (a reconnection that resumes), and bytes without end
 * (refused at the bound, the connection cancelled).
 */

function bodyOf(chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const c of chunks) controller.enqueue(encoder.encode(c));
      controller.close();
    },
  });
}

async function linesOf(chunks: string[], max = 1000): Promise<string[]> {
  const lines: string[] = [];
  for await (const line of readLines(bodyOf(chunks), max, 200)) lines.push(line);
  return lines;
}

test('lines end at LF, CRLF or CR, wherever the chunks split them; a last line without its end counts', async () => {
  assert.deepEqual(await linesOf(['a\nb\r\nc\rd']), ['a', 'b', 'c', 'd']);
  assert.deepEqual(await linesOf(['a\r', '\nb\r', 'c\n', '\n', 'd']), ['a', 'b', 'c', '', 'd']);
  assert.deepEqual(await linesOf(['é', 'ü\n']), ['éü']);
  // A multi-byte character split between two chunks.
  const bytes = new TextEncoder().encode('€\n');
  const split = new ReadableStream<Uint8Array>({
    start(c) {
      c.enqueue(bytes.slice(0, 1));
      c.enqueue(bytes.slice(1));
      c.close();
    },
  });
  const got: string[] = [];
  for await (const line of readLines(split, 10, 200)) got.push(line);
  assert.deepEqual(got, ['€']);
});

test('a line over the bound is refused, however it is chunked, and the body is cancelled', async () => {
  await assert.rejects(linesOf(['x'.repeat(600), 'x'.repeat(600), '\n'], 1000), (e: unknown) => e instanceof NetdiagError && e.code === 'response_too_large');
  let pulls = 0;
  let cancelled = false;
  const endless = new ReadableStream<Uint8Array>({
    pull(c) {
      pulls++;
      c.enqueue(new Uint8Array(64 * 1024).fill(0x61));
    },
    cancel() {
      cancelled = true;
    },
  });
  const client = createClient({
    baseUrl: 'http://127.0.0.1:9',
    maxBytes: 1024 * 1024,
    fetch: async () => new Response(endless, { status: 200, headers: { 'content-type': 'text/event-stream' } }),
  });
  const err = await (async () => {
    for await (const _ of client.stream('job_x')) assert.fail('no event in a line without end');
  })().catch((e: unknown) => e);
  assert.ok(err instanceof NetdiagError && err.code === 'response_too_large', String(err));
  assert.ok(cancelled, 'the body is cancelled');
  assert.ok(pulls <= 20, `read ${pulls} chunks of 64 KiB for a 1 MiB bound`);
});

test("a stream that ends with the server's error line (its database went away) is opened again and resumed", async (t) => {
  const b = await build(t, { env: { NETDIAG_ALLOW_TARGETS: '127.0.0.0/8' } });
  const ports = [await closedPort('127.0.0.1'), await closedPort('127.0.0.1'), await closedPort('127.0.0.1')];
  const setup = createClient({ baseUrl: b.url, token: b.token });
  const job = await setup.submit('/port/scan-range', { host: '127.0.0.1', ports });
  await setup.wait(job.id);

  // The first stream: the server's first two items, then the line it ends a failed stream with.
  const resumed: (string | null)[] = [];
  const client = createClient({
    baseUrl: b.url,
    token: b.token,
    fetch: async (input, init) => {
      const request = new Request(input, init);
      resumed.push(request.headers.get('last-event-id'));
      const response = await fetch(request);
      if (resumed.length > 1) return response;
      const events = (await response.text()).split('\n\n').filter((e) => e.includes('event: item')).slice(0, 2);
      const error = { error: { success: false, error: 'service_unavailable', message: 'the database cannot be reached; retry in 1 s' } };
      return new Response(bodyOf([`${events.join('\n\n')}\n\nevent: error\ndata: ${JSON.stringify(error)}\n\n`]), { status: 200, headers: response.headers });
    },
  });
  const events: JobEvent[] = [];
  for await (const event of client.stream(job.id)) events.push(event);
  assert.deepEqual(resumed, [null, '2']);
  assert.deepEqual(events.filter((e) => e.type === 'item').map((e) => e.seq), [1, 2, 3]);
  assert.equal(events.at(-1)?.type, 'job');
});

test('a stream whose server stays away gives up after maxReconnects with NetdiagConnectionError', async () => {
  let attempts = 0;
  const client = createClient({
    baseUrl: 'http://127.0.0.1:9',
    fetch: async () => {
      attempts++;
      throw new TypeError('fetch failed', { cause: new Error('connect ECONNREFUSED 127.0.0.1:9') });
    },
  });
  const abort = new AbortController();
  const err = await (async () => {
    for await (const _ of client.stream('job_x', { maxReconnects: 0, signal: abort.signal })) assert.fail('no event');
  })().catch((e: unknown) => e);
  assert.ok(err instanceof NetdiagConnectionError, String(err));
  assert.match(err.message, /ECONNREFUSED/);
  assert.equal(attempts, 1);
});

test('a server that answers a stream request with something else is an invalid_response at once, not a reconnection loop', async () => {
  let attempts = 0;
  const client = createClient({
    baseUrl: 'http://127.0.0.1:9',
    fetch: async () => {
      attempts++;
      return new Response('{"success":true,"data":{}}', { status: 200, headers: { 'content-type': 'application/json' } });
    },
  });
  const err = await (async () => {
    for await (const _ of client.stream('job_x')) assert.fail('no event');
  })().catch((e: unknown) => e);
  assert.ok(err instanceof NetdiagError && err.code === 'invalid_response', String(err));
  assert.match(err.message, /application\/json/);
  assert.equal(attempts, 1);
});
