import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { loadConfig } from '../../../src/config.js';
import { createDialer } from '../../../src/infra/net/dialer.js';
import { OPERATIONS } from '../../../src/operations/index.js';
import { PathRunner } from '../../../src/infra/path/index.js';
import { checkToolOf } from '../../../src/http/pages/check-forms.js';
import { build, tempDir } from '../../helpers/build.js';
import { TEST_HOST, assertNotCut, auditSchemes, chromiumMissing, launchBrowser, newContext } from '../../helpers/chromium.js';
import { startDnsServer } from '../../fixtures/dns-server.js';
import { startHttpCheckFixture } from '../../fixtures/http-check-server.js';
import { closedProxyPort, startHttpProxy, startTlsTarget } from '../../fixtures/proxies.js';
import { startRdapServer, writeBootstrapDir } from '../../fixtures/rdap-server.js';
import { startWhoisServer } from '../../fixtures/whois-server.js';
import { PASSWORD, setPassword } from './browserless.js';

// Chromium process: one browser at a time (scripts/test-tree.mjs).

/**
 * Every Checks form, as a person uses it in Debian's Chromium: only the fields a check needs are
 * filled, the rest left as the form shows them, and Run pressed. The job it makes must give the
 * same `data` as the API given the same fields (the API applying its own defaults), apart from
 * what changes between two runs (times, dates); its result page must show no field name of the
 * answer and no bare decimal (a duration without its unit). Each result page is then read at
 * 375 px too: axe-core finds no WCAG 2.1 A/AA violation and nothing is wider than the screen.
 * Every target is a loopback fixture; nothing leaves the machine.
 */

const OUTPUT = fileURLToPath(new URL('../../../test-output/every-check/', import.meta.url));
const noChromium = chromiumMissing('the browser test of every Checks form was');
const EMAIL = 'tester@example.com';

/** Keys whose values differ between two runs of the same check: times, dates and a server's clock. */
/** (DNS: a second lookup of the same name may come from the cache, its TTL counted down; a proxy's speed is measured.) */
const VOLATILE = /time|rtt|^(min|avg|max|mdev|samples|timings|date|age|expires|last-modified|days_left|speed|cached|ttl|last|best|worst|stdev)$|_at$|_ms$/i;

/** `data` with every volatile value replaced by its type, so that two runs compare equal when only those differ. */
function stable(value: unknown, key = ''): unknown {
  if (VOLATILE.test(key)) return value === null ? null : Array.isArray(value) ? value.map((v) => (v === null ? null : typeof v)) : typeof value;
  if (Array.isArray(value)) return value.map((v) => stable(v));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, stable(v, k)]));
  return value;
}

/** Every field name with an underscore in `data` (those are a program's words), leaving out what is data itself (headers, raw text). */
function fieldNames(value: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const v of value) fieldNames(v, into);
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k.includes('_')) into.add(k);
      if (k !== 'headers' && k !== 'raw') fieldNames(v, into);
    }
  }
  return into;
}

test('every Checks form run with its defaults in Chromium answers as the API does, and its result page reads in words at 1280 and 375 px', { skip: noChromium, timeout: 300_000 }, async (t) => {
  const dns = await startDnsServer({
    records: [
      { name: 'example.test', type: 'A', ttl: 300, data: '127.0.0.1' },
      { name: 'example.test', type: 'AAAA', ttl: 300, data: '::1' },
    ],
  });
  const whois = await startWhoisServer({ replies: { '*': 'Domain Name: EXAMPLE.TEST\nRegistrar: Fixture Registrar\nCreation Date: 2020-01-01T00:00:00Z\nRegistry Expiry Date: 2030-01-01T00:00:00Z\n' } });
  const rdap = await startRdapServer();
  const web = await startHttpCheckFixture();
  const proxy = await startHttpProxy({ kind: 'elite' });
  const tlsTarget = await startTlsTarget();
  const closed = await closedProxyPort();
  t.after(() => Promise.all([dns.close(), whois.close(), rdap.close(), web.close(), proxy.close(), tlsTarget.close()]));
  const bootstrap = tempDir(t, 'netdiag-rdap-');
  writeBootstrapDir(bootstrap, rdap.origin);
  const env = {
    NETDIAG_ALLOW_TARGETS: '127.0.0.0/8,::1/128',
    NETDIAG_DNS_SERVERS: `127.0.0.1:${dns.port}`,
    NETDIAG_DNSBL_ZONES: 'dnsbl.test',
    NETDIAG_WHOIS_SERVER: whois.address,
    NETDIAG_RDAP_BOOTSTRAP: bootstrap,
    NETDIAG_SSL_CHECK_TARGET: tlsTarget.address,
  };
  const b = await build(t, { env, deps: { dialer: createDialer(loadConfig(env)) } });
  await setPassword(b.store, EMAIL, PASSWORD);

  /** What a person types into each form (field name → text), and the same fields as the API takes them. */
  const CASES: Record<string, { form: Record<string, string>; api: Record<string, unknown> }> = {
    '/ipv6/validate': { form: { ipv6: '2001:db8::1' }, api: { ipv6: '2001:db8::1' } },
    '/ipv6/expand': { form: { ipv6: '2001:db8::1' }, api: { ipv6: '2001:db8::1' } },
    '/ipv6/test': { form: { target: '::1' }, api: { target: '::1' } },
    '/dns/lookup': { form: { domain: 'example.test' }, api: { domain: 'example.test' } },
    '/dns/lookup-bulk': { form: { domains: 'example.test\nmissing.test' }, api: { domains: ['example.test', 'missing.test'] } },
    '/dns/whois': { form: { domain: 'example.test' }, api: { domain: 'example.test' } },
    '/ip/lookup': { form: { ip: '8.8.8.8' }, api: { ip: '8.8.8.8' } },
    '/ip/lookup-bulk': { form: { ips: '8.8.8.8\n2001:4860:4860::8888\nnonsense' }, api: { ips: ['8.8.8.8', '2001:4860:4860::8888', 'nonsense'] } },
    '/ip/whois': { form: { ip: '8.8.8.8' }, api: { ip: '8.8.8.8' } },
    '/proxy/check': { form: { proxy: proxy.address }, api: { proxy: proxy.address } },
    '/proxy/check-bulk': { form: { proxies: `${proxy.address}\n${closed}` }, api: { proxies: [proxy.address, closed] } },
    '/port/scan': { form: { host: '127.0.0.1', port: String(web.port) }, api: { host: '127.0.0.1', port: web.port } },
    '/port/scan-range': { form: { host: '127.0.0.1', ports: `${web.port},${tlsTarget.port}` }, api: { host: '127.0.0.1', ports: `${web.port},${tlsTarget.port}` } },
    // The preset is a required choice: the form shows the first one chosen, and sends it.
    '/port/scan-common': { form: { host: '127.0.0.1' }, api: { host: '127.0.0.1', preset: 'top100' } },
    '/ping/tcp': { form: { host: '127.0.0.1', port: String(web.port) }, api: { host: '127.0.0.1', port: web.port } },
    '/http/check': { form: { url: web.url('/final') }, api: { url: web.url('/final') } },
    '/tls/check': { form: { host: '127.0.0.1', port: String(tlsTarget.port) }, api: { host: '127.0.0.1', port: tlsTarget.port } },
    // The path tools on loopback: one hop, the target itself.
    '/ping': { form: { target: '127.0.0.1' }, api: { target: '127.0.0.1' } },
    '/traceroute': { form: { target: '127.0.0.1' }, api: { target: '127.0.0.1' } },
    '/mtr': { form: { target: '127.0.0.1', packets: '2' }, api: { target: '127.0.0.1', packets: 2 } },
  };
  // Where the path tools cannot run here (a program or the privilege missing), their forms are not tried.
  const pathTools = await new PathRunner().availability();
  const runsHere = (path: string) => (path === '/ping' || path === '/traceroute' || path === '/mtr' ? pathTools[path.slice(1) as 'ping' | 'traceroute' | 'mtr'].available : true);
  assert.deepEqual(OPERATIONS.map((op) => op.path).filter((p) => !(p in CASES)), [], 'every operation has its case here');

  const origin = `http://${TEST_HOST}:${new URL(b.url).port}`;
  const browser = await launchBrowser(t);
  const page = await (await newContext(browser, { viewport: { width: 1280, height: 900 } })).newPage();
  await page.goto(`${origin}/login`);
  await page.getByLabel('E-mail').fill(EMAIL);
  await page.getByLabel('Password').fill(PASSWORD);
  await Promise.all([page.waitForEvent('load'), page.getByRole('button', { name: 'Sign in' }).click()]);

  const jobPages: Array<{ path: string; url: string }> = [];
  const differ: string[] = [];
  const words: string[] = [];
  for (const op of OPERATIONS.filter((o) => runsHere(o.path))) {
    const { form, api } = CASES[op.path]!;
    const slug = checkToolOf(op).slug;
    await page.goto(`${origin}/checks/${slug}`);
    for (const [name, text] of Object.entries(form)) await page.locator(`[name="${name}"]:not([type="hidden"])`).fill(text);
    await Promise.all([page.waitForURL(/\/jobs\/job_/), page.getByRole('button', { name: 'Run' }).click()]);
    // Finished: the page offers its downloads (the live page reloads itself when the job ends).
    await page.getByRole('link', { name: 'Download JSON' }).waitFor();
    const jobId = /\/jobs\/(job_[^/?#]+)/.exec(page.url())![1]!;
    jobPages.push({ path: op.path, url: page.url() });

    const job = (await (await b.api(`/api/jobs/${jobId}`)).json()) as { data: { status: string; result: unknown } };
    assert.equal(job.data.status, 'succeeded', `${op.path}: the form's job succeeded`);
    const direct = (await (await b.api(`/api${op.path}`, { json: api })).json()) as { success: boolean; data: unknown };
    assert.equal(direct.success, true, `${op.path}: the API answered ${JSON.stringify(direct)}`);
    try {
      assert.deepEqual(stable(job.data.result), stable(direct.data));
    } catch (e) {
      differ.push(`${op.path}: ${(e as Error).message}`);
    }

    // The result as shown: no field name of the answer, no decimal without a unit.
    const shown = await page.locator('section.result').innerText();
    for (const name of fieldNames(direct.data)) if (new RegExp(`\\b${name}\\b`).test(shown)) words.push(`${op.path}: shows the field name "${name}"`);
    const bare = await page.locator('section.result :is(td, dd)').evaluateAll((cells) => cells.map((c) => (c.textContent ?? '').trim()).filter((s) => /^-?\d+\.\d+$/.test(s)));
    for (const s of bare) words.push(`${op.path}: "${s}" without its unit`);
    await assertNotCut(page, `${op.path} at 1280 px`);
  }
  assert.deepEqual(differ, [], 'the dashboard and the API give the same data');
  assert.deepEqual(words, [], "result pages in a person's words");

  // Each result page again at 375 px: nothing cut off, and axe-core in both schemes.
  const narrow = await (await newContext(browser, { viewport: { width: 375, height: 800 } })).newPage();
  await narrow.context().addCookies((await page.context().cookies()).map((c) => ({ ...c })));
  for (const { path, url } of jobPages) {
    await narrow.goto(url);
    await narrow.getByRole('link', { name: 'Download JSON' }).waitFor();
    await assertNotCut(narrow, `${path} at 375 px`);
    await auditSchemes(narrow, OUTPUT, `375${path.replaceAll('/', '-')}`);
  }
});
