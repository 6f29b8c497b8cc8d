import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { runCli } from '../src/cli.js';
import { DEFAULTS, PACKAGE_DIR, loadConfig } from '../src/config.js';
import { tempDir } from './helpers/build.js';

const run = promisify(execFile);

async function cli(env: Record<string, string>, ...argv: string[]) {
  let out = '';
  let err = '';
  const code = await runCli(argv, { env, stdout: (t) => (out += t), stderr: (t) => (err += t) });
  return { code, out, err, json: () => JSON.parse(out) as Record<string, unknown> };
}

test('netdiag: every command of docs/api.md, printing JSON', async (t) => {
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

test('netdiag: usage at every level (issue 16): --help exits 0 on stdout, a missing subcommand exits 2 on stderr', async (t) => {
  const env = { DATABASE_URL: `sqlite:${join(tempDir(t), 'help.db')}` };
  const helps: Array<[string[], RegExp]> = [
    [['--help'], /^usage: netdiag <command>[\s\S]*account create --email E --name N[\s\S]*token list --email E/],
    [['-h'], /^usage: netdiag <command>/],
    [['help'], /^usage: netdiag <command>/],
    [['account', '--help'], /^usage: netdiag account <create\|set-plan\|suspend\|resume\|reset-password\|list>/],
    [['token', '--help'], /^usage: netdiag token <create\|revoke\|list>/],
    [['help', 'token'], /^usage: netdiag token </],
    [['account', 'create', '--help'], /^usage: netdiag account create --email E --name N \[--plan P\]\n/],
    [['token', 'list', '-h'], /^usage: netdiag token list --email E\n/],
    [['serve', '--help'], /^usage: netdiag serve\n[\s\S]*DATABASE_URL/],
  ];
  for (const [argv, usage] of helps) {
    const r = await cli(env, ...argv);
    assert.equal(r.code, 0, argv.join(' '));
    assert.match(r.out, usage, argv.join(' '));
    assert.equal(r.err, '', argv.join(' '));
  }
  const missing: Array<[string[], RegExp]> = [
    [[], /^usage: netdiag <command>/m],
    [['account'], /"account" needs a subcommand\n\nusage: netdiag account </],
    [['token'], /"token" needs a subcommand\n\nusage: netdiag token </],
    [['account', 'frobnicate'], /unknown command "account frobnicate"\n\nusage: netdiag account </],
    [['frobnicate'], /unknown command "frobnicate"\n\nusage: netdiag <command>/],
    [['token', 'create'], /token create needs --email\n\nusage: netdiag token create --email E/],
  ];
  for (const [argv, usage] of missing) {
    const r = await cli(env, ...argv);
    assert.equal(r.code, 2, argv.join(' '));
    assert.match(r.err, usage, argv.join(' '));
    assert.equal(r.out, '', argv.join(' '));
  }
  assert.match((await cli(env, '--help')).out, /Lost the first \(admin\) token\? .*netdiag token create --email admin@localhost/);
});

test('netdiag: the default database is under the package directory, not the current one (issue 16)', () => {
  const expected = `sqlite:${join(PACKAGE_DIR, 'data', 'netdiag.db')}`;
  assert.ok(existsSync(join(PACKAGE_DIR, 'package.json')), PACKAGE_DIR);
  assert.equal(DEFAULTS.databaseUrl, expected);
  assert.equal(loadConfig({}).databaseUrl, expected);
  assert.equal(loadConfig({ DATABASE_URL: 'sqlite:./elsewhere.db' }).databaseUrl, 'sqlite:./elsewhere.db');
});

test('netdiag: says on stderr which database it used; stdout stays JSON; account create prints the token id (issue 16)', async (t) => {
  const dir = tempDir(t);
  const bin = new URL('../bin/netdiag.js', import.meta.url).pathname;
  // A relative sqlite: path is relative to the current directory; the line names it absolutely.
  const env = { ...process.env, DATABASE_URL: 'sqlite:./rel/cli.db' };
  const created = await run(bin, ['account', 'create', '--email', 'd@example.com', '--name', 'D'], { env, cwd: dir });
  assert.equal(created.stderr.split('\n').filter((l) => l.startsWith('netdiag: database'))[0], `netdiag: database sqlite:${join(dir, 'rel', 'cli.db')}`);
  assert.ok(existsSync(join(dir, 'rel', 'cli.db')));
  const body = JSON.parse(created.stdout) as { account: { id: number }; token: string; token_id: number };
  assert.deepEqual(Object.keys(body), ['account', 'token', 'token_id']);
  assert.equal(typeof body.token_id, 'number');

  const tokens = await cli({ DATABASE_URL: `sqlite:${join(dir, 'rel', 'cli.db')}` }, 'token', 'list', '--email', 'd@example.com');
  assert.equal(tokens.code, 0, tokens.err);
  assert.deepEqual((JSON.parse(tokens.out) as Array<{ id: number }>).map((x) => x.id), [body.token_id]);
  assert.equal(tokens.err, `netdiag: database sqlite:${join(dir, 'rel', 'cli.db')}\n`);

  // The default, seen from another directory: the package's data/ directory (--help names it).
  const help = await run(bin, ['--help'], { env: { ...process.env, DATABASE_URL: '' }, cwd: dir });
  assert.ok(help.stdout.includes(`default sqlite:${join(PACKAGE_DIR, 'data', 'netdiag.db')}`), help.stdout);
});

test('netdiag token list: each token\'s prefix tells them apart (issue 16)', async (t) => {
  const env = { DATABASE_URL: `sqlite:${join(tempDir(t), 'prefix.db')}` };
  const { token } = (await cli(env, 'account', 'create', '--email', 'e@example.com', '--name', 'E')).json() as { token: string };
  const { token: second } = (await cli(env, 'token', 'create', '--email', 'e@example.com', '--label', 'ci')).json() as { token: string };
  const listed = JSON.parse((await cli(env, 'token', 'list', '--email', 'e@example.com')).out) as Array<{ prefix: string | null }>;
  assert.deepEqual(listed.map((x) => x.prefix), [token.slice(0, 9), second.slice(0, 9)]);
});

test('netdiag token create --expires-in-days: the token expires then, and is a 401 after it (issue 17)', async (t) => {
  const env = { DATABASE_URL: `sqlite:${join(tempDir(t), 'expiry.db')}` };
  await cli(env, 'account', 'create', '--email', 'x@example.com', '--name', 'X');
  const before = Date.now();
  const made = (await cli(env, 'token', 'create', '--email', 'x@example.com', '--expires-in-days', '30')).json() as { token: string; expires_at: string };
  const days = (Date.parse(made.expires_at) - before) / 86_400_000;
  assert.ok(days > 29.99 && days < 30.01, `expires in 30 days, not ${days}`);
  const never = (await cli(env, 'token', 'create', '--email', 'x@example.com')).json() as { expires_at: string | null };
  assert.equal(never.expires_at, null);
  for (const bad of ['0', '-1', 'soon', '99999']) {
    const r = await cli(env, 'token', 'create', '--email', 'x@example.com', '--expires-in-days', bad);
    assert.equal(r.code, 2, `--expires-in-days ${bad} is refused`);
    assert.match(r.err, /expires/);
  }
  // After the expiry the token is refused, with a message that says so.
  const { openSqliteStore } = await import('../src/infra/store/sqlite.js');
  const { AccountService } = await import('../src/domain/accounts/service.js');
  const store = await openSqliteStore(env.DATABASE_URL.slice('sqlite:'.length));
  t.after(() => store.close());
  const later = new AccountService(store, () => new Date(Date.parse(made.expires_at) + 1));
  await assert.rejects(later.authenticate(`Bearer ${made.token}`, Date.parse(made.expires_at) + 1), /expired/);
  assert.equal((await new AccountService(store).authenticate(`Bearer ${made.token}`)).account.email, 'x@example.com');
});

test('netdiag account reset-password prints a one-time link at NETDIAG_PUBLIC_URL (issue 17)', async (t) => {
  const env = { DATABASE_URL: `sqlite:${join(tempDir(t), 'reset.db')}`, NETDIAG_PUBLIC_URL: 'https://netdiag.example.com/' };
  await cli(env, 'account', 'create', '--email', 'r@example.com', '--name', 'R');
  const r = await cli(env, 'account', 'reset-password', '--email', 'R@example.com');
  assert.equal(r.code, 0, r.err);
  const { link, email } = r.json() as { link: string; email: string };
  assert.equal(email, 'r@example.com');
  assert.match(link, /^https:\/\/netdiag\.example\.com\/set-password\?token=[A-Za-z0-9_-]{43}$/);
  assert.equal((await cli(env, 'account', 'reset-password', '--email', 'nobody@example.com')).code, 2);
});

test('netdiag --help: a suspended account is refused with 403 (docs/api.md: forbidden), not 401', async (t) => {
  const env = { DATABASE_URL: `sqlite:${join(tempDir(t), 'help-403.db')}` };
  for (const argv of [['--help'], ['account', '--help'], ['account', 'suspend', '--help']]) {
    const r = await cli(env, ...argv);
    assert.equal(r.code, 0, argv.join(' '));
    const line = r.out.split('\n').find((l) => l.includes("refuse the account's tokens"));
    assert.ok(line, `${argv.join(' ')} describes account suspend: ${r.out}`);
    assert.match(line, /\(403\)/, line);
    assert.doesNotMatch(line, /401/, line);
  }
});
