import assert from 'node:assert/strict';
import { test } from 'node:test';
import { configuredJudgeUrl, loadConfig } from '../../src/config.js';
import { JudgeDirectory, MemoryJudgeLedger } from '../../src/domain/proxy/index.js';
import { startHttpProxy } from '../fixtures/proxies.js';
import { build } from '../helpers/build.js';

/**
 * Issue 24, docs/proxy.md: the judge every process uses, and a process whose judge does
 * not accept it answers 503 service_unavailable rather than calling a working proxy failed.
 */

test('the judge URL: NETDIAG_JUDGE_URL, else NETDIAG_PUBLIC_URL + /judge, else a listening instance its own, else the one recorded', async () => {
  const base = { DATABASE_URL: 'sqlite::memory:', NETDIAG_DNS_SERVERS: '127.0.0.1:1' };
  assert.equal(configuredJudgeUrl(loadConfig({ ...base, NETDIAG_JUDGE_URL: 'https://j.example/judge', NETDIAG_PUBLIC_URL: 'https://p.example' })), 'https://j.example/judge');
  assert.equal(configuredJudgeUrl(loadConfig({ ...base, NETDIAG_PUBLIC_URL: 'https://p.example/base/' })), 'https://p.example/base/judge');
  assert.equal(configuredJudgeUrl(loadConfig(base)), undefined);

  const record = new MemoryJudgeLedger();
  const worker = new JudgeDirectory({ record });
  await assert.rejects(worker.target(), (err: Error & { code?: string; status?: number }) => err.code === 'service_unavailable' && err.status === 503 && /no judge/.test(err.message));
  const server = new JudgeDirectory({ record });
  await server.listening({ address: '127.0.0.1', port: 8123 });
  assert.equal(server.current?.url.href, 'http://127.0.0.1:8123/judge');
  assert.equal((await worker.target()).url.href, 'http://127.0.0.1:8123/judge', 'the worker reads what the instance recorded');
  const configured = new JudgeDirectory({ configured: 'https://p.example/judge', record });
  await configured.listening({ address: '127.0.0.1', port: 9000 });
  assert.equal(configured.current?.url.href, 'https://p.example/judge', 'a configured judge wins over the own one');
  assert.equal(await record.recordedUrl(), 'https://p.example/judge', 'and is what the instance records');
});

test('a judge that refuses our nonces (another NETDIAG_JUDGE_SECRET): 503 naming the secret, never a working proxy reported failed', async (t) => {
  const proxy = await startHttpProxy({ kind: 'elite' });
  t.after(() => proxy.close());
  const env = { NETDIAG_ALLOW_TARGETS: '127.0.0.0/8' };
  const judgeSide = await build(t, { env: { ...env, NETDIAG_JUDGE_SECRET: 'a'.repeat(40) } });
  const checking = await build(t, { env: { ...env, NETDIAG_JUDGE_SECRET: 'b'.repeat(40), NETDIAG_JUDGE_URL: `${judgeSide.url}/judge` } });
  const res = await checking.api('/api/proxy/check', { json: { proxy: proxy.address, check_speed: false } });
  const body = (await res.json()) as { success: boolean; error: string; message: string };
  assert.equal(res.status, 503, JSON.stringify(body));
  assert.equal(res.headers.get('retry-after'), '60');
  assert.equal(body.error, 'service_unavailable');
  assert.match(body.message, /misconfigured/);
  assert.match(body.message, /NETDIAG_JUDGE_SECRET/);
  assert.ok(body.message.includes(`${judgeSide.url}/judge`), body.message);

  // The same proxy, judged by a judge that accepts our nonces: working.
  const fine = await build(t, { env: { ...env, NETDIAG_JUDGE_SECRET: 'a'.repeat(40), NETDIAG_JUDGE_URL: `${judgeSide.url}/judge` } });
  const ok = await fine.api('/api/proxy/check', { json: { proxy: proxy.address, check_speed: false } });
  assert.equal(ok.status, 200);
  assert.equal(((await ok.json()) as { data: { status: string } }).data.status, 'working');
});
