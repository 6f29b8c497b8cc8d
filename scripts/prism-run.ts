/**
 * The published document against the running server, judged by a third party: Stoplight Prism's
 * validating proxy (`prism proxy --errors`) between a client and a real netdiag server, and one
 * call of every operation of the document through it: every POST synchronously and as a job
 * (`Prefer: respond-async`), the job as JSON, as NDJSON and as Server-Sent Events, the job list,
 * a cancel, a redelivery and the secret's rotation with no body and no Content-Type, usage,
 * the user. Prism checks each request and each answer (status, headers, media type, body) against
 * the document; any violation is printed and the exit code is 1. `/metrics` (outside the
 * document) goes through `promtool check metrics` when promtool is installed.
 *
 * Prism is never a dependency of this repository; install it outside, once:
 *
 *   mkdir -p /tmp/prism && cd /tmp/prism && npm init -y >/dev/null && npm install --no-audit --no-fund @stoplight/prism-cli
 *   # promtool, optional: apt-get install prometheus (Debian ships promtool in it)
 *
 * then, from the repository:
 *
 *   node --import tsx scripts/prism-run.ts            # PRISM=/path/to/prism to use another one
 *
 * Nothing leaves the machine: the server's DNS, WHOIS, RDAP, judge and SSL-check target are
 * fixtures on loopback (test/fixtures), and probes aim at loopback listeners
 * (NETDIAG_ALLOW_TARGETS=127.0.0.0/8,::1/128). The server runs on a temporary SQLite file.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startDnsServer } from '../test/fixtures/dns-server.js';
import { startHttpCheckFixture } from '../test/fixtures/http-check-server.js';
import { startHttpProxy, startSilentPort, startTlsTarget } from '../test/fixtures/proxies.js';
import { startRdapServer, writeBootstrapDir } from '../test/fixtures/rdap-server.js';
import { startWhoisServer } from '../test/fixtures/whois-server.js';
import { freePort } from '../test/helpers/free-port.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const PRISM = process.env.PRISM ?? '/tmp/prism/node_modules/.bin/prism';
/** How long the server and Prism get to start listening before the run gives up. */
const START_GIVE_UP_MS = 60_000;
/** How long a job gets to finish before the run gives up on it. */
const JOB_GIVE_UP_MS = 60_000;
const METRICS_TOKEN = 'prism-run-metrics-token-0123456789';

const dir = mkdtempSync(join(tmpdir(), 'netdiag-prism-'));
const children: ChildProcess[] = [];
const closers: Array<() => Promise<void>> = [];

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, giveUpMs = START_GIVE_UP_MS): Promise<T> {
  const until = Date.now() + giveUpMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

// The fixtures the server reaches instead of the world.
const dns = await startDnsServer({
  records: [
    { name: 'example.test', type: 'A', ttl: 300, data: '127.0.0.1' },
    { name: 'example.test', type: 'AAAA', ttl: 300, data: '::1' },
  ],
});
const whois = await startWhoisServer({ replies: { '*': 'Domain Name: EXAMPLE.TEST\nRegistrar: Fixture Registrar\nCreation Date: 2020-01-01T00:00:00Z\n' } });
const rdap = await startRdapServer();
const web = await startHttpCheckFixture();
const proxy = await startHttpProxy({ kind: 'elite' });
const silent = await startSilentPort();
const tlsTarget = await startTlsTarget();
const receiver = http.createServer((req, res) => req.resume().on('end', () => res.writeHead(204).end()));
await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
closers.push(dns.close, whois.close, rdap.close, web.close, proxy.close, silent.close, tlsTarget.close, () => new Promise((r) => receiver.close(() => r())));
const receiverPort = (receiver.address() as { port: number }).port;

const bootstrap = join(dir, 'rdap');
writeBootstrapDir(bootstrap, rdap.origin);

const port = await freePort();
const prismPort = await freePort();
const server = spawn(process.execPath, ['bin/netdiag.js', 'serve'], {
  cwd: ROOT,
  env: {
    ...process.env,
    HOST: '127.0.0.1',
    PORT: String(port),
    DATABASE_URL: `sqlite:${join(dir, 'netdiag.db')}`,
    REDIS_URL: '',
    NETDIAG_ALLOW_TARGETS: '127.0.0.0/8,::1/128',
    NETDIAG_DNS_SERVERS: `127.0.0.1:${dns.port}`,
    NETDIAG_DNSBL_ZONES: 'dnsbl.test',
    NETDIAG_WHOIS_SERVER: whois.address,
    NETDIAG_RDAP_BOOTSTRAP: bootstrap,
    NETDIAG_SSL_CHECK_TARGET: tlsTarget.address,
    NETDIAG_METRICS_TOKEN: METRICS_TOKEN,
    LOG_LEVEL: 'warn',
  },
  stdio: ['ignore', 'pipe', 'inherit'],
});
children.push(server);
let serverOut = '';
server.stdout!.on('data', (chunk: Buffer) => (serverOut += chunk.toString('utf8')));
const origin = `http://127.0.0.1:${port}`;
const token = await waitFor('the server and its first token', async () => serverOut.match(/\bnd_[0-9A-Za-z]{32,}\b/)?.[0]);
await waitFor('the server to answer', async () => ((await fetch(`${origin}/healthz`)).ok ? true : undefined));

const documentFile = join(dir, 'openapi.json');
writeFileSync(documentFile, await (await fetch(`${origin}/api/openapi.json`)).text());
const prismLog: string[] = [];
const prism = spawn(PRISM, ['proxy', '--errors', '--host', '127.0.0.1', '--port', String(prismPort), documentFile, origin], { stdio: ['ignore', 'pipe', 'pipe'] });
children.push(prism);
prism.stdout!.on('data', (c: Buffer) => prismLog.push(c.toString('utf8')));
prism.stderr!.on('data', (c: Buffer) => prismLog.push(c.toString('utf8')));
const through = `http://127.0.0.1:${prismPort}`;
await waitFor('Prism to listen', async () => ((await fetch(`${through}/api/user`, { headers: { authorization: `Bearer ${token}` } })).status ? true : undefined));

interface Violation {
  call: string;
  status: number;
  problems: unknown;
}
const violations: Violation[] = [];
const calls: string[] = [];

/** One call through Prism: its violations (sl-violations, or the --errors problem) are recorded. */
async function call(method: string, path: string, opts: { json?: unknown; headers?: Record<string, string>; label?: string } = {}): Promise<{ status: number; headers: Headers; text: string }> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}`, ...opts.headers };
  if (opts.json !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${through}${path}`, { method, headers, body: opts.json === undefined ? undefined : JSON.stringify(opts.json) });
  const text = await res.text();
  const label = `${method} ${path}${opts.label ? ` (${opts.label})` : ''} → ${res.status}`;
  calls.push(label);
  const header = res.headers.get('sl-violations');
  const problem = res.headers.get('content-type')?.startsWith('application/problem+json') ? (JSON.parse(text) as { type?: string; validation?: unknown; detail?: string }) : undefined;
  if (header) violations.push({ call: label, status: res.status, problems: header.startsWith('[') ? JSON.parse(header) : header });
  else if (problem) violations.push({ call: label, status: res.status, problems: problem.validation ?? problem.detail ?? problem });
  return { status: res.status, headers: res.headers, text };
}

/** The body each POST is called with: loopback targets, so that every answer is a real one. */
const webUrl = web.url('/final');
const BODIES: Record<string, unknown> = {
  '/api/ipv6/validate': { ipv6: '2001:db8::1' },
  '/api/ipv6/expand': { ipv6: '2001:db8::1' },
  '/api/ipv6/test': { target: '::1' },
  '/api/dns/lookup': { domain: 'example.test', type: 'A' },
  '/api/dns/lookup-bulk': { domains: ['example.test', 'missing.test'], type: 'A' },
  '/api/dns/whois': { domain: 'example.test' },
  '/api/ip/lookup': { ip: '8.8.8.8', detailed: true, security_check: true },
  '/api/ip/lookup-bulk': { ips: ['8.8.8.8', '2001:4860:4860::8888', 'nonsense'] },
  '/api/ip/whois': { ip: '8.8.8.8' },
  '/api/proxy/check': { proxy: proxy.address },
  '/api/proxy/check-bulk': { proxies: [proxy.address, silent.address] },
  '/api/port/scan': { host: '127.0.0.1', port: web.port, timeout: 2 },
  '/api/port/scan-range': { host: '127.0.0.1', ports: [web.port, silent.port], timeout: 2 },
  '/api/port/scan-common': { host: '127.0.0.1', preset: 'web', timeout: 1 },
  '/api/ping/tcp': { host: '127.0.0.1', port: web.port, count: 2, timeout: 2 },
  '/api/http/check': { url: webUrl, method: 'GET', follow_redirects: true, timeout: 5 },
  '/api/tls/check': { host: '127.0.0.1', port: tlsTarget.port },
};

interface Operation {
  requestBody?: { required?: boolean; content?: Record<string, { examples?: Record<string, { value: unknown }> }> };
  responses?: Record<string, unknown>;
}
const doc = JSON.parse(await (await fetch(`${origin}/api/openapi.json`)).text()) as { paths: Record<string, Record<string, Operation>> };

async function finished(id: string): Promise<void> {
  await waitFor(`job ${id} to finish`, async () => {
    const res = await fetch(`${origin}/api/jobs/${id}`, { headers: { authorization: `Bearer ${token}` } });
    const body = (await res.json()) as { data?: { status: string } };
    return body.data && !['queued', 'running'].includes(body.data.status) ? true : undefined;
  }, JOB_GIVE_UP_MS);
}

let aJob: string | undefined;
const handled = new Set<string>();
try {
  // Every POST that runs as a job: synchronously, then as a job.
  for (const [path, methods] of Object.entries(doc.paths)) {
    const op = methods.post;
    if (!op?.responses?.['202']) continue;
    handled.add(`post ${path}`);
    const examples = op.requestBody?.content?.['application/json']?.examples;
    const body = BODIES[path] ?? Object.values(examples ?? {})[0]?.value;
    await call('POST', path, { json: body });
    const accepted = await call('POST', path, { json: body, headers: { prefer: 'respond-async' }, label: 'as a job' });
    const id = (JSON.parse(accepted.text) as { data?: { id?: string } }).data?.id;
    if (path === '/api/port/scan-range' && id) aJob = id;
  }

  // A job with a webhook, read every way once it has finished.
  const made = await call('POST', '/api/port/scan', {
    json: { ...(BODIES['/api/port/scan'] as object), webhook_url: `http://127.0.0.1:${receiverPort}/hook` },
    headers: { prefer: 'respond-async' },
    label: 'as a job with webhook_url',
  });
  const id = (JSON.parse(made.text) as { data: { id: string } }).data.id;
  await finished(id);
  const json = await call('GET', `/api/jobs/${id}`);
  await call('GET', `/api/jobs/${id}`, { headers: { 'if-none-match': json.headers.get('etag') ?? '""' }, label: 'If-None-Match' });
  await call('GET', `/api/jobs/${id}`, { headers: { accept: 'application/x-ndjson' }, label: 'NDJSON' });
  await call('GET', `/api/jobs/${id}`, { headers: { accept: 'text/event-stream' }, label: 'SSE' });
  await call('GET', `/api/jobs/${id}`, { headers: { accept: 'text/event-stream', 'last-event-id': '1' }, label: 'SSE resumed' });
  if (aJob) {
    await finished(aJob);
    await call('GET', `/api/jobs/${aJob}`, { headers: { accept: 'application/x-ndjson' }, label: 'NDJSON of a range scan' });
  }
  await call('POST', `/api/jobs/${id}/deliveries`, { label: 'no body, no Content-Type' });
  await call('POST', `/api/jobs/${id}/deliveries`, { json: {}, label: '{}' });
  handled.add('get /api/jobs/{id}').add('post /api/jobs/{id}/deliveries');

  // A job still running (a proxy that never answers), cancelled; then cancelled again: 409.
  const slow = await call('POST', '/api/proxy/check', { json: { proxy: silent.address }, headers: { prefer: 'respond-async' }, label: 'as a job, to cancel' });
  const slowId = (JSON.parse(slow.text) as { data: { id: string } }).data.id;
  await call('DELETE', `/api/jobs/${slowId}`);
  await call('DELETE', `/api/jobs/${slowId}`, { label: 'again' });
  await call('GET', '/api/jobs/job_000000000000000000000000', { label: 'unknown' });
  handled.add('delete /api/jobs/{id}');

  await call('GET', '/api/jobs');
  await call('GET', '/api/jobs?status=succeeded&limit=1');
  handled.add('get /api/jobs');
  await call('GET', '/api/webhooks/secret');
  await call('POST', '/api/webhooks/secret/rotate', { label: 'no body, no Content-Type' });
  handled.add('get /api/webhooks/secret').add('post /api/webhooks/secret/rotate');
  await call('GET', '/api/usage/export?format=csv&days=2', { label: 'CSV' });
  await call('GET', '/api/user', { headers: { authorization: 'Bearer nd_wrong' }, label: 'a wrong token' });

  // Everything else the document has, once, with what its parameters need.
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const method of Object.keys(methods)) {
      if (handled.has(`${method} ${path}`)) continue;
      if (method === 'get') await call('GET', path);
      else if (method === 'post') await call('POST', path, { json: Object.values(methods.post!.requestBody?.content?.['application/json']?.examples ?? {})[0]?.value });
      else await call(method.toUpperCase(), path);
    }
  }

  // Read one job more often than its limit allows: the 429 is in the document too.
  for (let i = 0; i < 12; i++) await call('GET', `/api/jobs/${id}`, { label: `read ${i + 1}` });
} finally {
  const metrics = await fetch(`${origin}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } }).then((r) => r.text());
  const promtool = spawnSync('promtool', ['check', 'metrics'], { input: metrics, encoding: 'utf8' });
  console.log(`\n${calls.length} calls through Prism:\n${calls.map((c) => `  ${c}`).join('\n')}`);
  if (violations.length > 0) {
    console.log(`\n${violations.length} answers with violations:`);
    for (const v of violations) console.log(`  ${v.call}\n    ${JSON.stringify(v.problems)}`);
  } else console.log('\nPrism: no violation');
  if (promtool.error) console.log(`promtool: not run (${promtool.error.message})`);
  else console.log(`promtool check metrics: exit ${promtool.status}${promtool.stdout || promtool.stderr ? `\n${promtool.stdout}${promtool.stderr}` : ''}`);
  process.exitCode = violations.length > 0 || (promtool.status ?? 0) !== 0 ? 1 : 0;
  if (process.env.PRISM_LOG) writeFileSync(process.env.PRISM_LOG, prismLog.join(''));
  for (const child of children) child.kill('SIGTERM');
  await Promise.all(closers.map((close) => close().catch(() => undefined)));
  web.close().catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
}
