import ipaddr from 'ipaddr.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EMAIL_MAX_CHARS, EMAIL_PATTERN } from './domain/accounts/service.js';
import { SIGNUP_MODES, type SignupMode } from './domain/accounts/signup.js';
import { ConfigError } from './errors.js';

/** One frozen, typed configuration, read from the environment and checked at boot. */

export interface HostPort {
  host: string;
  port: number;
}

export interface Config {
  port: number;
  host: string;
  databaseUrl: string;
  redisUrl: string | undefined;
  /** CIDRs probes may reach despite the target policy. */
  allowTargets: readonly string[];
  /** CIDRs of reverse proxies whose X-Forwarded-For is believed. */
  trustProxy: readonly string[];
  dnsServers: readonly HostPort[];
  whoisServer: HostPort;
  /** NETDIAG_RDAP_BOOTSTRAP: where RDAP's bootstrap files come from, a base URL or a directory. */
  rdapBootstrap: string;
  judgeUrl: string | undefined;
  /** NETDIAG_JUDGE_SECRET: the judge's signing key; unset, one made once and kept in the database. */
  judgeSecret: string | undefined;
  sslCheckTarget: HostPort;
  /** NETDIAG_EXTRA_CA_CERTS: the path of a PEM file whose certificates the HTTP and TLS checks trust besides Node's roots. */
  extraCaCertsFile: string | undefined;
  /** That file's PEM text, read and checked at boot. */
  extraCaCerts: string | undefined;
  dnsblZones: readonly string[];
  geoipCityDb: string | undefined;
  geoipAsnDb: string | undefined;
  /** NETDIAG_METRICS_TOKEN: the bearer token GET /metrics asks for; unset, /metrics is a 404. */
  metricsToken: string | undefined;
  /**
   * NETDIAG_METRICS_PORT: where `netdiag worker` serves its own GET /metrics (same token, on
   * HOST); unset, a worker serves none. 0 takes a free port (its ready line names it). An API
   * instance serves /metrics on PORT and ignores this.
   */
  metricsPort: number | undefined;
  /**
   * NETDIAG_CORS_ORIGINS: the web origins whose pages may call /api from a browser (CORS), exact
   * `scheme://host[:port]` each, or `*` for any; empty (the default), no CORS headers at all.
   */
  corsOrigins: readonly string[];
  logLevel: string;
  /** LOG_FORMAT: `pretty` (readable lines) or `json` (one JSON object a line); unset, pretty on a terminal. */
  logFormat: LogFormat | undefined;
  /** How long a client may take over its connection (see src/http/plugins/connection.ts). */
  timeouts: ConnectionTimeouts;
  /** After SIGTERM/SIGINT: how long requests in flight get to finish before the process exits anyway. */
  shutdownGraceMs: number;
  /** NETDIAG_SIGNUP: who may make an account on the dashboard. */
  signup: SignupMode;
  /** NETDIAG_PUBLIC_URL: where people reach this server (links in invitations); unset, http://localhost:PORT. */
  publicUrl: string | undefined;
  /** NETDIAG_ADMIN_EMAIL: the e-mail of the admin account the first start makes. */
  adminEmail: string;
  /** NETDIAG_WORKERS: jobs this instance runs at once; 0 accepts jobs without running any. */
  workers: number;
  /** NETDIAG_JOB_TTL_DAYS: how long jobs and their results are kept. */
  jobTtlDays: number;
  /** NETDIAG_RECONCILE_S: how soon calls admitted by an instance that died unanswered are given back (Redis). */
  reconcileMs: number;
}

export interface ConnectionTimeouts {
  /** From the first byte of a request to the end of its headers. */
  headersMs: number;
  /** From the first byte of a request to the end of its body; the answer's time is not counted. */
  requestMs: number;
  /** How long an idle keep-alive connection stays open between requests. */
  keepAliveMs: number;
}

export const LOG_FORMATS = ['json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/**
 * The directory of netdiag's package.json (this file is src/config.ts): the default SQLite file
 * lives under it, so the server and the CLI find the same database from any directory.
 */
export const PACKAGE_DIR = fileURLToPath(new URL('..', import.meta.url));

export const DEFAULTS = {
  port: 8080,
  host: '0.0.0.0',
  /** Absolute: the same file whatever the current directory (an explicit relative sqlite: path is relative to it). */
  databaseUrl: `sqlite:${join(PACKAGE_DIR, 'data', 'netdiag.db')}`,
  whoisServer: 'whois.iana.org:43',
  /** IANA's RDAP bootstrap registries (RFC 9224). */
  rdapBootstrap: 'https://data.iana.org/rdap/',
  sslCheckTarget: 'www.google.com:443',
  dnsblZones: 'zen.spamhaus.org,bl.spamcop.net,b.barracudacentral.org',
  logLevel: 'info',
  /** Slow-loris headers are cut after this; real clients send theirs in one packet. */
  headersTimeoutS: 10,
  /** Room for a 1 MiB body over a slow link; a body that trickles or stalls longer is a 408. */
  requestTimeoutS: 30,
  /** Longer than the 60 s idle timeout of the usual load balancers, so they never reuse a connection we closed. */
  keepAliveTimeoutS: 72,
  /**
   * The longest legitimate request with room to spare: a 1000-port scan of silent ports at the
   * 30 s timeout takes about a minute (the socket budget runs it in two waves).
   */
  shutdownGraceS: 90,
  signup: 'invite' as SignupMode,
  adminEmail: 'admin@localhost',
  /** Probe jobs one instance runs at once (docs/jobs.md). */
  workers: 8,
  jobTtlDays: 7,
  /** An instance's heartbeat lapses, and each instance reconciles, this often: well within docs/api.md's minute. */
  reconcileS: 15,
} as const;

/** The most jobs one instance may run at once: each may hold hundreds of sockets. */
export const MAX_WORKERS = 256;
/** The longest jobs may be kept: a year. */
export const MAX_JOB_TTL_DAYS = 365;

/** The longest any duration setting (timeouts, shutdown grace) may be: an hour. */
export const MAX_DURATION_S = 3_600;

/** NETDIAG_JUDGE_SECRET's shortest length: 32 characters (`openssl rand -hex 32` gives 64). */
export const JUDGE_SECRET_MIN_LENGTH = 32;
/** NETDIAG_CORS_ORIGINS' longest list: an allow-list, each request's Origin is looked up in it. */
export const MAX_CORS_ORIGINS = 100;

/** NETDIAG_METRICS_TOKEN's bounds: long enough not to be guessed, short enough for one header. */
export const METRICS_TOKEN_MIN_LENGTH = 16;
export const METRICS_TOKEN_MAX_LENGTH = 1024;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

type Env = Record<string, string | undefined>;

function list(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

function parsePort(variable: string, raw: string): number {
  if (!/^\d{1,5}$/.test(raw) || Number(raw) > 65535) {
    throw new ConfigError(variable, 'must be a port number 0-65535', raw);
  }
  return Number(raw);
}

function parseSeconds(variable: string, raw: string | undefined, fallback: number, max: number): number {
  const value = raw?.trim() || String(fallback);
  if (!/^\d{1,6}$/.test(value) || Number(value) < 1 || Number(value) > max) {
    throw new ConfigError(variable, `must be a whole number of seconds, 1-${max}`, value);
  }
  return Number(value);
}

function parseCount(variable: string, raw: string | undefined, fallback: number, min: number, max: number, unit: string): number {
  const value = raw?.trim() || String(fallback);
  if (!/^\d{1,6}$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new ConfigError(variable, `must be a whole number of ${unit}, ${min}-${max}`, value);
  }
  return Number(value);
}

function parseCidrs(variable: string, raw: string | undefined): string[] {
  return list(raw).map((item) => {
    try {
      const [addr, bits] = item.includes('/')
        ? ipaddr.parseCIDR(item)
        : [ipaddr.parse(item), ipaddr.parse(item).kind() === 'ipv4' ? 32 : 128];
      return `${addr.toString()}/${bits}`;
    } catch {
      throw new ConfigError(variable, `"${item}" is not an IP address or CIDR (e.g. 10.0.0.0/8, ::1/128)`, raw ?? '');
    }
  });
}

/**
 * NETDIAG_CORS_ORIGINS: `*` alone, or origins exactly as a browser sends them in `Origin`
 * (`https://app.example.com`, `http://localhost:5173`): a scheme, a host, a port only when it is
 * not the scheme's own, no path and no trailing slash, since the comparison is exact.
 */
export function parseCorsOrigins(raw: string | undefined): string[] {
  const items = list(raw);
  if (items.includes('*')) {
    if (items.length > 1) throw new ConfigError('NETDIAG_CORS_ORIGINS', '"*" (any origin) stands alone; list origins or give "*", not both', raw ?? '');
    return ['*'];
  }
  if (items.length > MAX_CORS_ORIGINS) throw new ConfigError('NETDIAG_CORS_ORIGINS', `at most ${MAX_CORS_ORIGINS} origins (got ${items.length})`, raw ?? '');
  return items.map((item) => {
    let origin: string | undefined;
    try {
      const url = new URL(item);
      if (url.protocol === 'http:' || url.protocol === 'https:') origin = url.origin;
    } catch {
      origin = undefined;
    }
    if (origin === undefined) throw new ConfigError('NETDIAG_CORS_ORIGINS', `"${item}" is not an origin; write http(s)://host[:port], e.g. https://app.example.com`, raw ?? '');
    if (origin !== item) throw new ConfigError('NETDIAG_CORS_ORIGINS', `"${item}" is not written as browsers send it; write "${origin}" (no path, no trailing slash, lower case, no default port)`, raw ?? '');
    return origin;
  });
}

/** A PEM file of CA certificates: read once at boot, and refused unless it holds at least one certificate. */
function readCaFile(path: string): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError('NETDIAG_EXTRA_CA_CERTS', `cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`, path);
  }
  if (!text.includes('-----BEGIN CERTIFICATE-----')) {
    throw new ConfigError('NETDIAG_EXTRA_CA_CERTS', 'must be a PEM file of CA certificates (-----BEGIN CERTIFICATE-----)', path);
  }
  return text;
}

/** `host[:port]`, `ip[:port]` or `[ipv6]:port`. */
export function parseHostPort(variable: string, raw: string, defaultPort: number): HostPort {
  const value = raw.trim();
  let host: string;
  let port = defaultPort;
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(value);
  if (bracketed) {
    host = bracketed[1]!;
    if (bracketed[2] !== undefined) port = parsePort(variable, bracketed[2]);
  } else if (ipaddr.IPv6.isValid(value)) {
    host = value;
  } else {
    const idx = value.lastIndexOf(':');
    if (idx >= 0) {
      host = value.slice(0, idx);
      port = parsePort(variable, value.slice(idx + 1));
    } else {
      host = value;
    }
  }
  if (!host || !/^[A-Za-z0-9.:%_-]+$/.test(host) || port === 0) {
    throw new ConfigError(variable, 'must be host[:port] with a port 1-65535', raw);
  }
  return { host, port };
}

/** The resolvers of /etc/resolv.conf, the way the system uses them. */
export function systemResolvers(resolvConf = '/etc/resolv.conf'): HostPort[] {
  let text = '';
  try {
    text = readFileSync(resolvConf, 'utf8');
  } catch {
    return [{ host: '127.0.0.1', port: 53 }];
  }
  const servers = text
    .split('\n')
    .map((line) => /^\s*nameserver\s+(\S+)/.exec(line)?.[1])
    .filter((s): s is string => s !== undefined && ipaddr.isValid(s.split('%')[0]!))
    .map((host) => ({ host, port: 53 }));
  return servers.length > 0 ? servers : [{ host: '127.0.0.1', port: 53 }];
}

/** `text` without the slashes it ends with (a loop: the regex /\/+$/ is quadratic on many slashes). */
export function withoutTrailingSlashes(text: string): string {
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 0x2f) end--;
  return text.slice(0, end);
}

/**
 * Where people reach this server, for links the server or the CLI print: NETDIAG_PUBLIC_URL, else
 * http://localhost:PORT (or HOST when it names one address rather than all); `port` overrides the
 * configured one with the port actually bound.
 */
export function publicBaseUrl(config: Pick<Config, 'publicUrl' | 'port' | 'host'>, port: number = config.port): string {
  if (config.publicUrl) return config.publicUrl;
  const host = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host.includes(':') ? `[${config.host}]` : config.host;
  return `http://${host}:${port}`;
}

/**
 * The judge URL the operator set (docs/proxy.md): NETDIAG_JUDGE_URL, else
 * NETDIAG_PUBLIC_URL + /judge; undefined when neither is set (a server then uses its own /judge,
 * a worker the one an API instance recorded in the database).
 */
export function configuredJudgeUrl(config: Pick<Config, 'judgeUrl' | 'publicUrl'>): string | undefined {
  return config.judgeUrl ?? (config.publicUrl === undefined ? undefined : `${config.publicUrl}/judge`);
}

export function loadConfig(env: Env = process.env): Config {
  const databaseUrl = env.DATABASE_URL?.trim() || DEFAULTS.databaseUrl;
  if (!/^sqlite:.+/.test(databaseUrl) && !/^postgres(ql)?:\/\/.+/.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL', 'must be sqlite:<path> or postgres://…', databaseUrl);
  }
  const redisUrl = env.REDIS_URL?.trim() || undefined;
  if (redisUrl !== undefined && !/^rediss?:\/\/.+/.test(redisUrl)) {
    throw new ConfigError('REDIS_URL', 'must be redis://host:port[/db]', redisUrl);
  }
  const judgeUrl = env.NETDIAG_JUDGE_URL?.trim() || undefined;
  if (judgeUrl !== undefined) {
    let ok = false;
    try {
      ok = ['http:', 'https:'].includes(new URL(judgeUrl).protocol);
    } catch {
      ok = false;
    }
    if (!ok) throw new ConfigError('NETDIAG_JUDGE_URL', 'must be an http:// or https:// URL', judgeUrl);
  }
  const judgeSecret = env.NETDIAG_JUDGE_SECRET?.trim() || undefined;
  if (judgeSecret !== undefined && judgeSecret.length < JUDGE_SECRET_MIN_LENGTH) {
    // The value is a secret: the error names its length, never the value.
    throw new ConfigError('NETDIAG_JUDGE_SECRET', `must be at least ${JUDGE_SECRET_MIN_LENGTH} characters (got ${judgeSecret.length}); e.g. openssl rand -hex 32`, '***');
  }
  const metricsToken = env.NETDIAG_METRICS_TOKEN?.trim() || undefined;
  // /metrics is outside /api and its limiter: a short token could be guessed.
  if (metricsToken !== undefined && (metricsToken.length < METRICS_TOKEN_MIN_LENGTH || metricsToken.length > METRICS_TOKEN_MAX_LENGTH)) {
    throw new ConfigError('NETDIAG_METRICS_TOKEN', `must be ${METRICS_TOKEN_MIN_LENGTH} to ${METRICS_TOKEN_MAX_LENGTH} characters (got ${metricsToken.length}); e.g. openssl rand -hex 32`, '***');
  }
  // It is sent as `Authorization: Bearer <token>`, one word: a token with a space could never match.
  if (metricsToken !== undefined && /\s/.test(metricsToken)) {
    throw new ConfigError('NETDIAG_METRICS_TOKEN', 'must be one word, with no spaces; e.g. openssl rand -hex 32', '***');
  }

  const metricsPortRaw = env.NETDIAG_METRICS_PORT?.trim() || undefined;
  const metricsPort = metricsPortRaw === undefined ? undefined : parsePort('NETDIAG_METRICS_PORT', metricsPortRaw);
  // A listener without a token would serve nothing but 404s: say so at boot instead.
  if (metricsPort !== undefined && metricsToken === undefined) {
    throw new ConfigError('NETDIAG_METRICS_PORT', 'needs NETDIAG_METRICS_TOKEN (the bearer token its /metrics asks for)', metricsPortRaw!);
  }

  const logLevel = env.LOG_LEVEL?.trim() || DEFAULTS.logLevel;
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}`, logLevel);
  }
  const logFormatRaw = env.LOG_FORMAT?.trim() || undefined;
  if (logFormatRaw !== undefined && !(LOG_FORMATS as readonly string[]).includes(logFormatRaw)) {
    throw new ConfigError('LOG_FORMAT', `must be one of ${LOG_FORMATS.join(', ')}`, logFormatRaw);
  }
  const logFormat = logFormatRaw as LogFormat | undefined;
  const dnsblZones = list(env.NETDIAG_DNSBL_ZONES ?? DEFAULTS.dnsblZones);
  for (const zone of dnsblZones) {
    if (!/^[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+\.?$/.test(zone)) {
      throw new ConfigError('NETDIAG_DNSBL_ZONES', `"${zone}" is not a DNS zone name`, env.NETDIAG_DNSBL_ZONES ?? '');
    }
  }
  const dnsRaw = env.NETDIAG_DNS_SERVERS?.trim();
  const dnsServers = dnsRaw
    ? list(dnsRaw).map((s) => {
        const hp = parseHostPort('NETDIAG_DNS_SERVERS', s, 53);
        if (!ipaddr.isValid(hp.host)) {
          throw new ConfigError('NETDIAG_DNS_SERVERS', `"${s}" must be an IP address, ip[:port]`, dnsRaw);
        }
        return hp;
      })
    : systemResolvers();

  const requestTimeoutS = parseSeconds('NETDIAG_REQUEST_TIMEOUT_S', env.NETDIAG_REQUEST_TIMEOUT_S, DEFAULTS.requestTimeoutS, MAX_DURATION_S);
  const headersTimeoutS = parseSeconds('NETDIAG_HEADERS_TIMEOUT_S', env.NETDIAG_HEADERS_TIMEOUT_S, DEFAULTS.headersTimeoutS, MAX_DURATION_S);
  if (headersTimeoutS > requestTimeoutS) {
    throw new ConfigError('NETDIAG_HEADERS_TIMEOUT_S', `must not be longer than NETDIAG_REQUEST_TIMEOUT_S (${requestTimeoutS})`, String(headersTimeoutS));
  }
  const timeouts: ConnectionTimeouts = Object.freeze({
    headersMs: headersTimeoutS * 1000,
    requestMs: requestTimeoutS * 1000,
    keepAliveMs: parseSeconds('NETDIAG_KEEPALIVE_TIMEOUT_S', env.NETDIAG_KEEPALIVE_TIMEOUT_S, DEFAULTS.keepAliveTimeoutS, MAX_DURATION_S) * 1000,
  });

  const signupRaw = env.NETDIAG_SIGNUP?.trim().toLowerCase() || DEFAULTS.signup;
  if (!(SIGNUP_MODES as readonly string[]).includes(signupRaw)) {
    throw new ConfigError('NETDIAG_SIGNUP', `must be one of ${SIGNUP_MODES.join(', ')}`, signupRaw);
  }
  const publicUrlRaw = env.NETDIAG_PUBLIC_URL?.trim() || undefined;
  let publicUrl: string | undefined;
  if (publicUrlRaw !== undefined) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(publicUrlRaw);
    } catch {
      parsed = undefined;
    }
    if (!parsed || !['http:', 'https:'].includes(parsed.protocol) || parsed.username || parsed.password || parsed.search || parsed.hash) {
      throw new ConfigError('NETDIAG_PUBLIC_URL', 'must be an http:// or https:// URL without credentials, query or fragment, e.g. https://netdiag.example.com', publicUrlRaw);
    }
    // Links are built by appending paths: no trailing slash.
    publicUrl = withoutTrailingSlashes(parsed.toString());
  }

  const rdapBootstrap = env.NETDIAG_RDAP_BOOTSTRAP?.trim() || DEFAULTS.rdapBootstrap;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(rdapBootstrap)) {
    let ok = false;
    try {
      const url = new URL(rdapBootstrap);
      ok = ['http:', 'https:'].includes(url.protocol) && !url.username && !url.password;
    } catch {
      ok = false;
    }
    if (!ok) throw new ConfigError('NETDIAG_RDAP_BOOTSTRAP', 'must be an http:// or https:// base URL, or a directory holding dns.json, ipv4.json, ipv6.json and asn.json', rdapBootstrap);
  }
  const extraCaCertsFile = env.NETDIAG_EXTRA_CA_CERTS?.trim() || undefined;
  const extraCaCerts = extraCaCertsFile === undefined ? undefined : readCaFile(extraCaCertsFile);

  const adminEmail = env.NETDIAG_ADMIN_EMAIL?.trim().toLowerCase() || DEFAULTS.adminEmail;
  if (adminEmail.length > EMAIL_MAX_CHARS || !EMAIL_PATTERN.test(adminEmail)) {
    throw new ConfigError('NETDIAG_ADMIN_EMAIL', 'must be an e-mail address like ops@example.com', adminEmail);
  }

  return Object.freeze({
    signup: signupRaw as SignupMode,
    publicUrl,
    adminEmail,
    port: parsePort('PORT', env.PORT?.trim() || String(DEFAULTS.port)),
    host: env.HOST?.trim() || DEFAULTS.host,
    databaseUrl,
    redisUrl,
    allowTargets: Object.freeze(parseCidrs('NETDIAG_ALLOW_TARGETS', env.NETDIAG_ALLOW_TARGETS)),
    trustProxy: Object.freeze(parseCidrs('NETDIAG_TRUST_PROXY', env.NETDIAG_TRUST_PROXY)),
    dnsServers: Object.freeze(dnsServers),
    whoisServer: parseHostPort('NETDIAG_WHOIS_SERVER', env.NETDIAG_WHOIS_SERVER?.trim() || DEFAULTS.whoisServer, 43),
    rdapBootstrap,
    judgeUrl,
    judgeSecret,
    sslCheckTarget: parseHostPort(
      'NETDIAG_SSL_CHECK_TARGET',
      env.NETDIAG_SSL_CHECK_TARGET?.trim() || DEFAULTS.sslCheckTarget,
      443,
    ),
    extraCaCertsFile,
    extraCaCerts,
    dnsblZones: Object.freeze(dnsblZones),
    geoipCityDb: env.NETDIAG_GEOIP_CITY_DB?.trim() || undefined,
    geoipAsnDb: env.NETDIAG_GEOIP_ASN_DB?.trim() || undefined,
    metricsToken,
    metricsPort,
    corsOrigins: Object.freeze(parseCorsOrigins(env.NETDIAG_CORS_ORIGINS)),
    logLevel,
    logFormat,
    timeouts,
    shutdownGraceMs: parseSeconds('NETDIAG_SHUTDOWN_GRACE_S', env.NETDIAG_SHUTDOWN_GRACE_S, DEFAULTS.shutdownGraceS, MAX_DURATION_S) * 1000,
    workers: parseCount('NETDIAG_WORKERS', env.NETDIAG_WORKERS, DEFAULTS.workers, 0, MAX_WORKERS, 'jobs'),
    jobTtlDays: parseCount('NETDIAG_JOB_TTL_DAYS', env.NETDIAG_JOB_TTL_DAYS, DEFAULTS.jobTtlDays, 1, MAX_JOB_TTL_DAYS, 'days'),
    reconcileMs: parseSeconds('NETDIAG_RECONCILE_S', env.NETDIAG_RECONCILE_S, DEFAULTS.reconcileS, MAX_DURATION_S) * 1000,
  });
}
