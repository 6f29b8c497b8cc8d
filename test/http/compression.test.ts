import assert from 'node:assert/strict';
import http from 'node:http';
import { test } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { COMPRESSION_THRESHOLD_BYTES } from '../../src/http/plugins/compression.js';
import { createDialer } from '../../src/infra/net/dialer.js';
import { build } from '../helpers/build.js';
import { eventually } from '../helpers/eventually.js';
import { hangingConnect } from '../infra/net/fixtures/connect-spy.js';

interface RawAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** The bytes as sent: node:http, unlike fetch, decodes nothing. */
  body: Buffer;
}

function get(url: string, headers: Record<string, string>, method = 'GET'): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** A JSON body of `bytes` bytes or a little more. */
const padded = (bytes: number) => ({ pad: 'x'.repeat(bytes) });

test('gzip and br on the OpenAPI document, decoded equal to the plain one; HEAD still answers; nothing below 1 KiB', async (t) => {
  const b = await build(t, {
    extraRoutes: (app) => {
      app.get('/test/small', async () => padded(COMPRESSION_THRESHOLD_BYTES - 100));
      app.get('/test/csv', async (_request, reply) => reply.type('text/csv; charset=utf-8').send('a,b\n'.repeat(1000)));
    },
  });
  const plain = await get(`${b.url}/api/openapi.json`, {});
  assert.equal(plain.status, 200);
  assert.equal(plain.headers['content-encoding'], undefined);
  assert.ok(plain.body.length > 100_000);

  const gzip = await get(`${b.url}/api/openapi.json`, { 'accept-encoding': 'gzip' });
  assert.equal(gzip.headers['content-encoding'], 'gzip');
  assert.match(String(gzip.headers.vary), /accept-encoding/i);
  assert.ok(gzip.body.length < plain.body.length / 4, `gzip: ${gzip.body.length} of ${plain.body.length} bytes`);
  assert.deepEqual(gunzipSync(gzip.body), plain.body);

  // curl --compressed asks for what it can decode; br is preferred when offered.
  const br = await get(`${b.url}/api/openapi.json`, { 'accept-encoding': 'deflate, gzip, br, zstd' });
  assert.equal(br.headers['content-encoding'], 'br');
  assert.deepEqual(brotliDecompressSync(br.body), plain.body);

  // HEAD describes the plain representation (Fastify answers it after the GET's own hooks).
  const head = await get(`${b.url}/api/openapi.json`, { 'accept-encoding': 'gzip' }, 'HEAD');
  assert.equal(head.status, 200);
  assert.equal(head.headers['content-length'], String(plain.body.length));
  assert.equal(head.body.length, 0);

  const small = await get(`${b.url}/test/small`, { 'accept-encoding': 'gzip, br' });
  assert.equal(small.headers['content-encoding'], undefined);
  assert.ok(small.body.length < COMPRESSION_THRESHOLD_BYTES);
  assert.equal(JSON.parse(small.body.toString()).pad.length, COMPRESSION_THRESHOLD_BYTES - 100);

  const csv = await get(`${b.url}/test/csv`, { 'accept-encoding': 'gzip' });
  assert.equal(csv.headers['content-encoding'], 'gzip', 'text is compressed too');
  assert.equal(gunzipSync(csv.body).toString(), 'a,b\n'.repeat(1000));

  // The reference's page is completed (viewport, bar) before it is compressed, not skipped for being bytes.
  const docs = await get(`${b.url}/api/docs/`, { 'accept-encoding': 'gzip' });
  assert.equal(docs.status, 200);
  assert.equal(docs.headers['content-encoding'], 'gzip');
  assert.match(gunzipSync(docs.body).toString(), /<meta name="viewport"/);

  // An error envelope is small and stays plain; a request without Accept-Encoding gets no encoding.
  const refused = await get(`${b.url}/api/user`, { 'accept-encoding': 'gzip' });
  assert.equal(refused.status, 401);
  assert.equal(refused.headers['content-encoding'], undefined);
});

test('the judge and /metrics: the judge is never compressed, /metrics is when asked', async (t) => {
  const b = await build(t, {
    env: { NETDIAG_METRICS_TOKEN: 'metrics-token-0123456789' },
    // Under /judge as the judge's own routes are: the same rule applies to any route there.
    extraRoutes: (app) => app.get('/judge/test/big', async () => padded(4 * COMPRESSION_THRESHOLD_BYTES)),
  });
  const judged = await get(`${b.url}/judge/test/big`, { 'accept-encoding': 'gzip, br' });
  assert.equal(judged.status, 200);
  assert.equal(judged.headers['content-encoding'], undefined);
  assert.equal(JSON.parse(judged.body.toString()).pad.length, 4 * COMPRESSION_THRESHOLD_BYTES);

  const metrics = await get(`${b.url}/metrics`, { authorization: 'Bearer metrics-token-0123456789', 'accept-encoding': 'gzip' });
  assert.equal(metrics.status, 200);
  assert.equal(metrics.headers['content-encoding'], 'gzip');
  assert.match(gunzipSync(metrics.body).toString(), /^# HELP /m);
});

test('job streams (SSE, NDJSON) are never compressed: the first event arrives while the job runs', async (t) => {
  const hanging = hangingConnect();
  const dialer = createDialer({ allowTargets: ['127.0.0.0/8'], dnsServers: [{ host: '127.0.0.1', port: 1 }] }, { connectFn: hanging.fn });
  const b = await build(t, { deps: { dialer } });
  const created = await b.api('/api/port/scan-range', { json: { host: '127.0.0.1', ports: '1-3', timeout: 30 }, headers: { prefer: 'respond-async' } });
  assert.equal(created.status, 202);
  const { data: job } = (await created.json()) as { data: { id: string } };
  await eventually(() => hanging.sockets.length >= 3, { what: 'the job running' });
  // SSE opens with its retry line: it must arrive now, as written, not held in a compressor.
  const sse = await new Promise<{ headers: http.IncomingHttpHeaders; chunk: string }>((resolve, reject) => {
    const req = http.get(`${b.url}/api/jobs/${job.id}`, { agent: false, headers: { authorization: `Bearer ${b.token}`, accept: 'text/event-stream', 'accept-encoding': 'gzip, br' } }, (res) => {
      res.once('data', (chunk: Buffer) => {
        resolve({ headers: res.headers, chunk: chunk.toString() });
        req.destroy();
      });
    });
    req.on('error', reject);
  });
  assert.equal(sse.headers['content-encoding'], undefined);
  assert.match(sse.chunk, /^retry: \d+\n\n/);
  // NDJSON writes nothing before the first item: its headers say it goes as it is.
  const ndjson = await new Promise<http.IncomingHttpHeaders>((resolve, reject) => {
    const req = http.get(`${b.url}/api/jobs/${job.id}`, { agent: false, headers: { authorization: `Bearer ${b.token}`, accept: 'application/x-ndjson', 'accept-encoding': 'gzip, br' } }, (res) => {
      resolve(res.headers);
      req.destroy();
    });
    req.on('error', reject);
  });
  assert.match(String(ndjson['content-type']), /^application\/x-ndjson/);
  assert.equal(ndjson['content-encoding'], undefined);
  assert.ok(hanging.sockets.every((s) => !s.destroyed), 'the job was still running when the streams spoke');
});

test('a job read with If-None-Match: the compressed answer has a weak ETag, which still brings the 304', async (t) => {
  const b = await build(t, { env: { NETDIAG_ALLOW_TARGETS: '127.0.0.0/8' } });
  // Enough closed loopback ports for a result over the threshold.
  const created = await b.api('/api/port/scan-range', { json: { host: '127.0.0.1', ports: '40000-40040', timeout: 2 }, headers: { prefer: 'respond-async' } });
  assert.equal(created.status, 202);
  const { data: job } = (await created.json()) as { data: { id: string } };
  const auth = { authorization: `Bearer ${b.token}` };
  const done = await eventually(
    () => get(`${b.url}/api/jobs/${job.id}`, { ...auth, 'accept-encoding': 'gzip' }),
    (a) => a.status === 200 && /"status":"succeeded"/.test(gunzipOrPlain(a)),
    { what: 'the job done' },
  );
  assert.equal(done.headers['content-encoding'], 'gzip');
  const etag = String(done.headers.etag);
  assert.match(etag, /^W\/"/);
  const plain = await get(`${b.url}/api/jobs/${job.id}`, auth);
  assert.equal(plain.headers.etag, etag.slice(2), 'the plain answer keeps the strong tag');
  const again = await get(`${b.url}/api/jobs/${job.id}`, { ...auth, 'accept-encoding': 'gzip', 'if-none-match': etag });
  assert.equal(again.status, 304);
  assert.equal(again.body.length, 0);
});

function gunzipOrPlain(a: RawAnswer): string {
  return a.headers['content-encoding'] === 'gzip' ? gunzipSync(a.body).toString() : a.body.toString();
}
