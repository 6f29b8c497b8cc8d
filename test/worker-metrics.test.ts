import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import net from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { composeApp } from '../src/compose-app.js';
import { loadConfig } from '../src/config.js';
import { openStore } from '../src/infra/store/index.js';
import { tempDir } from './helpers/build.js';
import { createAccountToken } from './helpers/accounts-cli.js';
import { eventually } from './helpers/eventually.js';
import { startReceiver } from './infra/webhooks/receiver.js';

// own process: a worker it starts and stops (scripts/test-tree.mjs).

/**
 * Issue 38: a `netdiag worker` serves its own /metrics (NETDIAG_METRICS_PORT, the same token):
 * a job it runs and the webhook delivery it sends are counted there, and a scrape of the API
 * instance and the worker together counts each once.
 */

const BIN = fileURLToPath(new URL('../bin/netdiag.js', import.meta.url));
const TOKEN = 'metrics-token-0123456789abcdef';
/** How long the job and its webhook may take (a failure message, not a bound). */
const DONE_MS = 30_000;

/** The sum of a counter's series in a text exposition (0 when it has none). */
function total(exposition: string, name: string): number {
  let sum = 0;
  for (const line of exposition.split('\n')) {
    if (line.startsWith(`${name}{`) || line.startsWith(`${name} `)) sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

async function scrape(base: string, token = TOKEN): Promise<{ status: number; text: string }> {
  const res = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, text: await res.text() };
}

test('netdiag worker: its own /metrics counts the probe and the delivery it made; with the API scraped too, each counts once', { timeout: 90_000 }, async (t) => {
  const databaseUrl = `sqlite:${join(tempDir(t), 'metrics.db')}`;
  const token = await createAccountToken(databaseUrl, 'm@example.com', 'enterprise');
  const target = net.createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => target.close(() => resolve())));
  const receiver = await startReceiver((_req, res) => {
    res.writeHead(200);
    res.end();
  });
  t.after(() => receiver.close());

  const shared = { DATABASE_URL: databaseUrl, NETDIAG_ALLOW_TARGETS: '127.0.0.0/8', NETDIAG_DNS_SERVERS: '127.0.0.1:1', NETDIAG_METRICS_TOKEN: TOKEN };
  // The API runs no jobs (NETDIAG_WORKERS=0): the worker does.
  const app = await composeApp({ config: loadConfig({ ...shared, NETDIAG_WORKERS: '0' }), store: await openStore(databaseUrl), logger: false });
  t.after(() => app.close());
  await app.listen({ port: 0, host: '127.0.0.1' });
  const apiBase = `http://127.0.0.1:${(app.server.address() as net.AddressInfo).port}`;

  const child = spawn(process.execPath, [BIN, 'worker'], {
    env: { ...process.env, ...shared, NETDIAG_WORKERS: '1', NETDIAG_METRICS_PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', LOG_FORMAT: 'json' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  t.after(() => void child.kill('SIGKILL'));
  let stderr = '';
  const ready = await new Promise<string>((resolve, reject) => {
    child.stderr!.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
      const line = stderr.split('\n').find((l) => l.startsWith('netdiag worker:'));
      if (line) resolve(line);
    });
    child.once('exit', (code) => reject(new Error(`worker exited ${code}: ${stderr}`)));
  });
  const port = /metrics on 127\.0\.0\.1:(\d+)\/metrics/.exec(ready)?.[1];
  assert.ok(port, `the ready line names the metrics port: ${ready}`);
  const workerBase = `http://127.0.0.1:${port}`;

  // The token is asked for, in the envelope; nothing else is served.
  const refused = await scrape(workerBase, 'wrong-token-0123456789');
  assert.equal(refused.status, 401);
  assert.equal((JSON.parse(refused.text) as { error: string }).error, 'unauthorized');
  assert.equal((await fetch(`${workerBase}/api/user`)).status, 404);

  const created = await fetch(`${apiBase}/api/port/scan-range`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', prefer: 'respond-async' },
    body: JSON.stringify({ host: '127.0.0.1', ports: [(target.address() as net.AddressInfo).port], timeout: 3, webhook_url: `${receiver.url}/hook` }),
  });
  assert.equal(created.status, 202);

  await eventually(() => receiver.received.length >= 1, { timeoutMs: DONE_MS, intervalMs: 100, what: 'the webhook' });
  // Its attempt is counted once the receiver's answer is read.
  const worker = await eventually(
    () => scrape(workerBase),
    (s) => total(s.text, 'netdiag_webhook_deliveries_total') >= 1,
    { timeoutMs: DONE_MS, intervalMs: 100, what: "the delivery in the worker's metrics" },
  );
  const api = await scrape(apiBase);
  assert.equal(worker.status, 200);
  assert.equal(api.status, 200);
  const both = (name: string) => total(worker.text, name) + total(api.text, name);
  assert.equal(total(worker.text, 'netdiag_probes_total'), 1, 'the job ran in the worker, and is counted there');
  assert.equal(both('netdiag_probes_total'), 1, 'once across the API and the worker');
  assert.equal(both('netdiag_webhook_deliveries_total'), receiver.received.length, 'every delivery received counted once');
  assert.match(worker.text, /netdiag_webhook_deliveries_total\{outcome="delivered"\} 1/);

  child.kill('SIGTERM');
  assert.equal(await new Promise((r) => child.once('exit', r)), 0);
});
