import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { runCli } from '../src/cli.js';
import { tempDir } from './helpers/build.js';

const run = promisify(execFile);

async function cli(env: Record<string, string>, ...argv: string[]) {
  let out = '';
  let err = '';
  const code = await runCli(argv, { env, stdout: (t) => (out += t), stderr: (t) => (err += t) });
  return { code, out, err, json: () => JSON.parse(out) as Record<string, unknown> };
}

test('netdiag: every command of API.md, printing JSON', async (t) => {
  const env = { DATABASE_URL: `sqlite:${join(tempDir(t), 'cli.db')}` };

  const created = await cli(env, 'account', 'create', '--email', 'Ada@Example.com', '--name', 'Ada', '--plan', 'pro');
  assert.equal(created.code, 0, created.err);
  const { account, token } = created.json() as { account: Record<string, unknown>; token: string };
  assert.deepEqual(account, { id: 1, name: 'Ada', email: 'ada@example.com', plan: 'pro' });
  assert.match(token, /^nd_[0-9A-Za-z]{32,}$/);

  const defaultPlan = await cli(env, 'account', 'create', '--email', 'bob@example.com', '--name', 'Bob');
  assert.equal((defaultPlan.json().account as { plan: string }).plan, 'free');

  const setPlan = await cli(env, 'account', 'set-plan', '--email', 'ada@example.com', '--plan', 'enterprise');
  assert.equal(setPlan.code, 0);
  assert.equal(setPlan.json().plan, 'enterprise');

  assert.equal((await cli(env, 'account', 'suspend', '--email', 'ada@example.com')).json().status, 'suspended');
  assert.equal((await cli(env, 'account', 'resume', '--email', 'ada@example.com')).json().status, 'active');

  const list = JSON.parse((await cli(env, 'account', 'list')).out) as Array<{ email: string }>;
  assert.deepEqual(list.map((a) => a.email), ['ada@example.com', 'bob@example.com']);

  const tokenCreated = await cli(env, 'token', 'create', '--email', 'ada@example.com', '--label', 'laptop');
  assert.equal(tokenCreated.code, 0);
  const { token: second, id } = tokenCreated.json() as { token: string; id: number };
  assert.match(second, /^nd_/);
  assert.equal(typeof id, 'number');

  const tokens = await cli(env, 'token', 'list', '--email', 'ada@example.com');
  assert.equal(tokens.code, 0);
  assert.ok(!tokens.out.includes(token) && !tokens.out.includes(second), 'token list must never print secrets');
  assert.ok(!/hash/.test(tokens.out), 'token list must not print hashes either');
  const listed = JSON.parse(tokens.out) as Array<{ id: number; label: string; revoked_at: string | null }>;
  assert.deepEqual(listed.map((x) => x.label), ['default', 'laptop']);

  const revoked = await cli(env, 'token', 'revoke', '--id', String(id));
  assert.equal(revoked.code, 0);
  assert.match(String(revoked.json().revoked_at), /^\d{4}-\d\d-\d\dT/);
});

test('netdiag: bad arguments and unknown e-mails exit 2 with a clear message', async (t) => {
  const env = { DATABASE_URL: `sqlite:${join(tempDir(t), 'cli.db')}` };
  await cli(env, 'account', 'create', '--email', 'a@example.com', '--name', 'A');
  const cases: Array<[string[], RegExp]> = [
    [['account', 'set-plan', '--email', 'nobody@example.com', '--plan', 'pro'], /no account with e-mail nobody@example.com/],
    [['account', 'suspend', '--email', 'nobody@example.com'], /no account/],
    [['token', 'create', '--email', 'nobody@example.com'], /no account/],
    [['token', 'list', '--email', 'nobody@example.com'], /no account/],
    [['token', 'revoke', '--id', '999'], /no token with id 999/],
    [['token', 'revoke', '--id', 'abc'], /--id must be a token id/],
    [['account', 'create', '--email', 'x@example.com'], /needs --name/],
    [['account', 'create', '--email', 'not-an-email', '--name', 'X'], /email: must be an e-mail address/],
    [['account', 'create', '--email', 'a@example.com', '--name', 'Again'], /exists already/],
    [['account', 'create', '--email', 'y@example.com', '--name', 'Y', '--plan', 'gold'], /plan: must be one of free, basic, pro, enterprise/],
    [['account', 'set-plan', '--email', 'a@example.com', '--plan', 'gold'], /plan: must be one of/],
    [['account', 'create', '--email', 'y@example.com', '--name', 'Y', '--colour', 'red'], /Unknown option '--colour'/],
    [['account', 'frobnicate'], /unknown command "account frobnicate"/],
    [[], /usage: netdiag/],
  ];
  for (const [argv, message] of cases) {
    const r = await cli(env, ...argv);
    assert.equal(r.code, 2, `${argv.join(' ')} should exit 2`);
    assert.match(r.err + r.out, message, argv.join(' '));
  }
});

test('netdiag: --plan is accepted in any case and stored in canonical case (issue 16)', async (t) => {
  const env = { DATABASE_URL: `sqlite:${join(tempDir(t), 'cli.db')}` };
  const created = await cli(env, 'account', 'create', '--email', 'p@example.com', '--name', 'P', '--plan', 'Free');
  assert.equal(created.code, 0, created.err);
  assert.equal((created.json().account as { plan: string }).plan, 'free');
  const setPlan = await cli(env, 'account', 'set-plan', '--email', 'p@example.com', '--plan', 'PRO');
  assert.equal(setPlan.code, 0, setPlan.err);
  assert.equal(setPlan.json().plan, 'pro');
});

test('the installed bin runs without a build step and exits 2 on errors', async (t) => {
  const env = { ...process.env, DATABASE_URL: `sqlite:${join(tempDir(t), 'bin.db')}` };
  const bin = new URL('../bin/netdiag.js', import.meta.url).pathname;
  const { stdout } = await run(bin, ['account', 'create', '--email', 'c@example.com', '--name', 'C'], { env });
  assert.equal((JSON.parse(stdout) as { account: { email: string } }).account.email, 'c@example.com');
  await assert.rejects(run(bin, ['token', 'create', '--email', 'missing@example.com'], { env }), (err: { code: number; stderr: string }) => {
    assert.equal(err.code, 2);
    assert.match(err.stderr, /no account with e-mail missing@example.com/);
    return true;
  });
});

test('a bad configuration value stops the server with one line naming the variable', async () => {
  const bin = new URL('../bin/netdiag.js', import.meta.url).pathname;
  for (const [variable, value] of [
    ['PORT', 'eighty'],
    ['DATABASE_URL', 'mysql://x'],
    ['NETDIAG_ALLOW_TARGETS', '10.0.0.0/33'],
    ['NETDIAG_DNS_SERVERS', 'resolver.example'],
  ] as const) {
    await assert.rejects(run(bin, ['serve'], { env: { ...process.env, [variable]: value } }), (err: { code: number; stderr: string }) => {
      assert.equal(err.code, 2);
      const lines = err.stderr.trim().split('\n').filter((l) => !l.includes('Warning') && !l.includes('--trace'));
      assert.equal(lines.length, 1, err.stderr);
      assert.match(lines[0]!, new RegExp(`^netdiag: ${variable}=`));
      return true;
    });
  }
});
