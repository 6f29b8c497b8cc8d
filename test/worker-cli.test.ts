import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runCli, USAGE } from '../src/cli.js';

function io(env: Record<string, string> = {}) {
  const out = { stdout: '', stderr: '' };
  return { out, io: { env, stdout: (t: string) => void (out.stdout += t), stderr: (t: string) => void (out.stderr += t) } };
}

test('netdiag worker: listed in the usage, its own --help, NETDIAG_WORKERS=0 and arguments refused (exit 2, nothing opened)', async () => {
  assert.match(USAGE, /netdiag worker +run jobs and webhook deliveries without an HTTP server/);
  const help = io();
  assert.equal(await runCli(['worker', '--help'], help.io), 0);
  assert.match(help.out.stdout, /^usage: netdiag worker\n/);
  assert.match(help.out.stdout, /SIGTERM gives the jobs/);
  const zero = io({ NETDIAG_WORKERS: '0', DATABASE_URL: 'sqlite::memory:' });
  assert.equal(await runCli(['worker'], zero.io), 2);
  assert.match(zero.out.stderr, /NETDIAG_WORKERS must be 1 or more/);
  const extra = io();
  assert.equal(await runCli(['worker', 'now'], extra.io), 2);
  assert.match(extra.out.stderr, /takes no arguments/);
});
