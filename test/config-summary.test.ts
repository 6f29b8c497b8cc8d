import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { configSummary, describeDatabase, withoutPassword } from '../src/config-summary.js';
import { loadConfig } from '../src/config.js';
import { ConfigError } from '../src/errors.js';

test('withoutPassword: the password of a URL, in its userinfo or its query, becomes ***', () => {
  assert.equal(withoutPassword('postgres://app:hunter2@db.internal:5432/netdiag'), 'postgres://app:***@db.internal:5432/netdiag');
  assert.equal(withoutPassword('postgres://app@db.internal/netdiag?password=hunter2&sslmode=require'), 'postgres://app@db.internal/netdiag?password=***&sslmode=require');
  assert.equal(withoutPassword('redis://:hunter2@127.0.0.1:6379/0'), 'redis://:***@127.0.0.1:6379/0');
  assert.equal(withoutPassword('redis://127.0.0.1:6379/0'), 'redis://127.0.0.1:6379/0');
  assert.doesNotMatch(withoutPassword('postgres://a:hunter2@[bad'), /hunter2/);
});

test('describeDatabase: an SQLite path made absolute against the current directory', () => {
  assert.equal(describeDatabase('sqlite:./data/x.db'), `sqlite:${join(process.cwd(), 'data', 'x.db')}`);
  assert.equal(describeDatabase('sqlite:/var/lib/netdiag.db'), 'sqlite:/var/lib/netdiag.db');
  assert.equal(describeDatabase('sqlite::memory:'), 'sqlite::memory:');
});

test('configSummary: no secret of the configuration appears in it', () => {
  const config = loadConfig({
    DATABASE_URL: 'postgres://app:pg-secret@db/netdiag',
    REDIS_URL: 'rediss://user:redis-secret@cache:6380/2',
    NETDIAG_JUDGE_URL: 'https://judge:judge-secret@judge.example/judge',
    NETDIAG_JUDGE_SECRET: 'j'.repeat(40),
    NETDIAG_METRICS_TOKEN: 'metrics-secret-0123456789',
    NETDIAG_DNS_SERVERS: '127.0.0.1,[::1]:5353',
  });
  const text = JSON.stringify(configSummary(config));
  for (const secret of ['pg-secret', 'redis-secret', 'judge-secret', 'j'.repeat(40), 'metrics-secret']) assert.ok(!text.includes(secret), secret);
  assert.match(String(configSummary(config).metrics), /^on/);
  const summary = configSummary(config);
  assert.equal(summary.database, 'postgres://app:***@db/netdiag');
  assert.deepEqual(summary.dnsServers, ['127.0.0.1:53', '[::1]:5353']);
});

test('LOG_FORMAT: json or pretty; unset, the logger decides by the terminal', () => {
  assert.equal(loadConfig({}).logFormat, undefined);
  assert.equal(loadConfig({ LOG_FORMAT: 'json' }).logFormat, 'json');
  assert.equal(loadConfig({ LOG_FORMAT: 'pretty' }).logFormat, 'pretty');
  assert.throws(() => loadConfig({ LOG_FORMAT: 'yaml' }), (err: unknown) => err instanceof ConfigError && /^LOG_FORMAT="yaml": must be one of json, pretty$/.test(err.message));
});

test('NETDIAG_WORKERS (0-256, default 8) and NETDIAG_JOB_TTL_DAYS (1-365, default 7)', () => {
  assert.equal(loadConfig({}).workers, 8);
  assert.equal(loadConfig({}).jobTtlDays, 7);
  assert.equal(loadConfig({ NETDIAG_WORKERS: '0' }).workers, 0);
  assert.equal(loadConfig({ NETDIAG_JOB_TTL_DAYS: '30' }).jobTtlDays, 30);
  for (const bad of ['-1', '257', '2.5', 'many']) {
    assert.throws(() => loadConfig({ NETDIAG_WORKERS: bad }), (err: unknown) => err instanceof ConfigError && /^NETDIAG_WORKERS=/.test(err.message));
  }
  for (const bad of ['0', '366', 'week']) {
    assert.throws(() => loadConfig({ NETDIAG_JOB_TTL_DAYS: bad }), (err: unknown) => err instanceof ConfigError && /^NETDIAG_JOB_TTL_DAYS=/.test(err.message));
  }
  const summary = configSummary(loadConfig({ NETDIAG_WORKERS: '3' }));
  assert.equal(summary.workers, 3);
  assert.equal(summary.jobTtlDays, 7);
});

test('NETDIAG_METRICS_TOKEN: unset, /metrics is off; 16 to 1024 characters; a bad one is refused without being shown', () => {
  assert.equal(loadConfig({}).metricsToken, undefined);
  assert.equal(configSummary(loadConfig({})).metrics, 'off');
  assert.equal(loadConfig({ NETDIAG_METRICS_TOKEN: ' 0123456789abcdef ' }).metricsToken, '0123456789abcdef');
  for (const bad of ['short-secret', 'x'.repeat(1025), 'two words of secret text']) {
    assert.throws(
      () => loadConfig({ NETDIAG_METRICS_TOKEN: bad }),
      (err: unknown) => err instanceof ConfigError && /^NETDIAG_METRICS_TOKEN=/.test(err.message) && !err.message.includes(bad),
    );
  }
});

test('NETDIAG_METRICS_PORT: unset, a worker serves no /metrics; a port needs NETDIAG_METRICS_TOKEN', () => {
  const token = { NETDIAG_METRICS_TOKEN: '0123456789abcdef' };
  assert.equal(loadConfig(token).metricsPort, undefined);
  assert.equal(loadConfig({ ...token, NETDIAG_METRICS_PORT: ' 9464 ' }).metricsPort, 9464);
  assert.equal(configSummary(loadConfig({ ...token, NETDIAG_METRICS_PORT: '9464' })).metricsPort, 9464);
  assert.throws(() => loadConfig({ ...token, NETDIAG_METRICS_PORT: '70000' }), (err: unknown) => err instanceof ConfigError && /^NETDIAG_METRICS_PORT=/.test(err.message));
  assert.throws(() => loadConfig({ NETDIAG_METRICS_PORT: '9464' }), (err: unknown) => err instanceof ConfigError && /needs NETDIAG_METRICS_TOKEN/.test(err.message));
});

test('NETDIAG_EXTRA_CA_CERTS: a PEM file read at start; missing or without a certificate it stops the start', async (t) => {
  const { mkdtempSync, writeFileSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const dir = mkdtempSync(join(tmpdir(), 'netdiag-ca-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
  writeFileSync(join(dir, 'ca.pem'), pem);
  writeFileSync(join(dir, 'key.pem'), '-----BEGIN PRIVATE KEY-----\n');
  const config = loadConfig({ NETDIAG_EXTRA_CA_CERTS: join(dir, 'ca.pem') });
  assert.equal(config.extraCaCerts, pem);
  assert.equal(configSummary(config).extraCaCerts, join(dir, 'ca.pem'));
  assert.equal(loadConfig({}).extraCaCerts, undefined);
  assert.throws(() => loadConfig({ NETDIAG_EXTRA_CA_CERTS: join(dir, 'missing.pem') }), (err) => err instanceof ConfigError && /NETDIAG_EXTRA_CA_CERTS.*cannot be read \(ENOENT\)/.test(err.message));
  assert.throws(() => loadConfig({ NETDIAG_EXTRA_CA_CERTS: join(dir, 'key.pem') }), (err) => err instanceof ConfigError && /must be a PEM file of CA certificates/.test(err.message));
});
