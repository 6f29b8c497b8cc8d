import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { MAX_PORTS_PER_JOB, MAX_PORTS_PER_SCAN } from '../../src/domain/ports/index.js';
import type { JobView } from '../../src/domain/jobs/types.js';
import { build } from '../helpers/build.js';
import { startListener } from '../infra/net/fixtures/connect-spy.js';
import { blackholeUnavailable, runInBlackhole } from '../domain/ports/fixtures/blackhole.js';

// own process: 65535-port scans in a network namespace (scripts/test-tree.mjs).

/**
 * Issue 27: a scan of every port (`"1-65535"`) as a job, through the API. It runs in a fresh
 * network namespace (this file runs itself there), where nothing listens but this test's own
 * listeners and the app: other test files open and close listeners on 127.0.0.1 all the time,
 * and any of them alive during the scan would be a right "open" this test could not tell from
 * a wrong one.
 */

const INSIDE = 'NETDIAG_TEST_IN_NAMESPACE';

type Ok<T> = { success: true; data: T; message: string };
interface Item {
  port: number;
  state: string;
  open: boolean;
}

if (process.env[INSIDE] !== '1') {
  test('a full-range scan as a job, in its own network namespace', { skip: blackholeUnavailable() ?? false }, async () => {
    // Without the parent runner's context the run inside reports as TAP, not in the runner's own protocol.
    const out = await runInBlackhole(fileURLToPath(import.meta.url), [], {}, { [INSIDE]: '1', NODE_TEST_CONTEXT: '' });
    assert.equal(out.code, 0, `${out.stdout}\n${out.stderr}`);
    // The run inside reports its tests as TAP: both passed, none was skipped.
    assert.match(out.stdout, /^# pass 2$/m, out.stdout);
    assert.match(out.stdout, /^# fail 0$/m, out.stdout);
  });
} else {
  test('"1-65535" synchronously is a 400 that says a job takes it', async (t) => {
    const { api } = await build(t, { env: { NETDIAG_ALLOW_TARGETS: '127.0.0.0/8' } });
    const res = await api('/api/port/scan-range', { json: { host: '127.0.0.1', ports: '1-65535' } });
    const body = (await res.json()) as { error: string; message: string };
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.equal(body.error, 'validation_error');
    assert.match(body.message, new RegExp(`at most ${MAX_PORTS_PER_SCAN} ports.*expands to 65535; a job \\(Prefer: respond-async\\) takes up to ${MAX_PORTS_PER_JOB}`));
  });

  test('"1-65535" as a job: every port once, in order, listeners open and the rest closed; streamed whole', async (t) => {
    const listeners = await Promise.all([startListener('127.0.0.1'), startListener('127.0.0.1'), startListener('127.0.0.1')]);
    t.after(() => Promise.all(listeners.map((l) => l.close())));
    const { api, url } = await build(t, { env: { NETDIAG_ALLOW_TARGETS: '127.0.0.0/8' } });
    // The app's own port listens too: nothing else does in this namespace.
    const open = [...listeners.map((l) => l.port), Number(new URL(url).port)].sort((a, b) => a - b);

    const created = await api('/api/port/scan-range', { json: { host: '127.0.0.1', ports: '1-65535', timeout: 1 }, headers: { prefer: 'respond-async' } });
    const job = ((await created.json()) as Ok<JobView>).data;
    assert.equal(created.status, 202);
    assert.deepEqual(job.progress, { done: 0, total: 65535 });

    // The stream, opened at once, gives every item as it completes, then the finished job.
    const streamed = await api(`/api/jobs/${job.id}`, { headers: { accept: 'application/x-ndjson' } });
    assert.equal(streamed.status, 200);
    const lines = (await streamed.text()).trimEnd().split('\n');
    assert.equal(lines.length, 65535 + 1);
    const last = JSON.parse(lines.pop()!) as JobView;
    assert.equal(last.status, 'succeeded', JSON.stringify(last.error));
    const ports = new Array<number>(65535);
    lines.forEach((line, i) => {
      const { seq, index, item } = JSON.parse(line) as { seq: number; index: number; item: Item };
      assert.equal(seq, i + 1);
      assert.equal(ports[index], undefined, `index ${index} streamed twice`);
      ports[index] = item.port;
    });
    assert.ok(ports.every((port, i) => port === i + 1), 'item i is port i + 1');
    assert.equal((last.result as Item[]).length, 65535);

    // GET: the whole result, each port once, in order.
    const res = await api(`/api/jobs/${job.id}`);
    const done = ((await res.json()) as Ok<JobView>).data;
    assert.equal(res.status, 200);
    assert.equal(done.status, 'succeeded');
    assert.deepEqual(done.progress, { done: 65535, total: 65535 });
    const items = done.result as Item[];
    assert.equal(items.length, 65535);
    assert.ok(items.every((item, i) => item.port === i + 1), 'sorted by port, none missing or repeated');
    assert.deepEqual(items.filter((i) => i.open).map((i) => i.port), open);
    const states = new Map<string, number>();
    for (const i of items) states.set(i.state, (states.get(i.state) ?? 0) + 1);
    assert.deepEqual(Object.fromEntries(states), { open: open.length, closed: 65535 - open.length });
    assert.deepEqual(last.result, done.result);
  });
}
