import { resolve } from 'node:path';
import type { Config, HostPort } from './config.js';

/** What the start-up line and the CLI say about the configuration: never a password or a secret. */

/** Where a URL may carry a password besides its userinfo (libpq and ioredis read `?password=`). */
const PASSWORD_PARAMS = ['password', 'pass'];

/** A URL with its passwords replaced by `***` (user names stay: they help find the right account). */
export function withoutPassword(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // Not parseable, so it cannot be shown safely either.
    return '(unparseable URL)';
  }
  const params = PASSWORD_PARAMS.filter((name) => parsed.searchParams.has(name));
  if (parsed.password === '' && params.length === 0) return url;
  if (parsed.password !== '') parsed.password = '***';
  for (const name of params) parsed.searchParams.set(name, '***');
  return parsed.toString();
}

/** DATABASE_URL as the store opens it: an SQLite path made absolute, a PostgreSQL URL without its password. */
export function describeDatabase(databaseUrl: string): string {
  if (databaseUrl.startsWith('sqlite:')) {
    const path = databaseUrl.slice('sqlite:'.length);
    return path === ':memory:' ? databaseUrl : `sqlite:${resolve(path)}`;
  }
  return withoutPassword(databaseUrl);
}

const hostPort = (hp: HostPort) => (hp.host.includes(':') ? `[${hp.host}]:${hp.port}` : `${hp.host}:${hp.port}`);

/** The effective configuration, one object for the start-up log line. */
export function configSummary(config: Config): Record<string, unknown> {
  return {
    database: describeDatabase(config.databaseUrl),
    redis: config.redisUrl === undefined ? null : withoutPassword(config.redisUrl),
    allowTargets: config.allowTargets,
    trustProxy: config.trustProxy,
    judgeUrl: config.judgeUrl === undefined ? null : withoutPassword(config.judgeUrl),
    judgeSecret: config.judgeSecret === undefined ? 'kept in the database' : 'NETDIAG_JUDGE_SECRET',
    dnsServers: config.dnsServers.map(hostPort),
    whoisServer: hostPort(config.whoisServer),
    rdapBootstrap: config.rdapBootstrap,
    sslCheckTarget: hostPort(config.sslCheckTarget),
    metrics: config.metricsToken === undefined ? 'off' : 'on (GET /metrics with NETDIAG_METRICS_TOKEN)',
    metricsPort: config.metricsPort ?? null,
    corsOrigins: config.corsOrigins,
    extraCaCerts: config.extraCaCertsFile ?? null,
    geoip: { city: config.geoipCityDb ?? 'bundled', asn: config.geoipAsnDb ?? 'bundled' },
    timeoutsS: {
      headers: config.timeouts.headersMs / 1000,
      request: config.timeouts.requestMs / 1000,
      keepAlive: config.timeouts.keepAliveMs / 1000,
    },
    shutdownGraceS: config.shutdownGraceMs / 1000,
    logLevel: config.logLevel,
    signup: config.signup,
    publicUrl: config.publicUrl ?? null,
    workers: config.workers,
    jobTtlDays: config.jobTtlDays,
  };
}
