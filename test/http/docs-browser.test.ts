import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import tls from 'node:tls';
import { test, type TestContext } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { build } from '../helpers/build.js';
import { TEST_HOST, chromiumMissing, launchChromium } from '../helpers/chromium.js';
import { listenUntilTestEnds } from '../helpers/listen.js';

// Chromium process: one browser at a time (scripts/test-tree.mjs).

/**
 * The API reference as a new user meets it: Debian's Chromium opens it by a host name that is not
 * localhost (mapped to 127.0.0.1 inside the browser, nothing else resolves), over plain HTTP and
 * over HTTPS, and every request the page makes must stay on that origin and be answered.
 */

const HOST = TEST_HOST;
const OUTPUT = fileURLToPath(new URL('../../test-output/', import.meta.url));
const noChromium = chromiumMissing('the browser check of /api/docs was');

interface Seen {
  requests: string[];
  answers: { url: string; status: number }[];
  failed: string[];
  console: string[];
}

function record(page: Page): Seen {
  const seen: Seen = { requests: [], answers: [], failed: [], console: [] };
  page.on('request', (r) => {
    if (!r.url().startsWith('data:')) seen.requests.push(r.url());
  });
  page.on('response', (r) => {
    if (!r.url().startsWith('data:')) seen.answers.push({ url: r.url(), status: r.status() });
  });
  page.on('requestfailed', (r) => seen.failed.push(`${r.url()}: ${r.failure()?.errorText ?? 'failed'}`));
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') seen.console.push(m.text());
  });
  return seen;
}

/** Opens the reference at `origin`, checks what it loaded and rendered, saves a screenshot. */
async function openReference(t: TestContext, context: BrowserContext, origin: string, screenshot: string): Promise<void> {
  const page = await context.newPage();
  const seen = record(page);
  const main = await page.goto(`${origin}/api/docs`, { waitUntil: 'load' });
  assert.equal(main?.status(), 200);
  // The operations are drawn once swagger-ui has fetched and parsed the document.
  await page
    .waitForFunction(() => document.querySelectorAll('.opblock').length >= 18, undefined, { timeout: 20_000 })
    .catch(() => undefined);
  await page.waitForLoadState('networkidle');

  const report = (): string => JSON.stringify({ ...seen, screenshot }, null, 2);
  assert.deepEqual(seen.failed, [], `requests failed: ${report()}`);
  const offOrigin = seen.requests.filter((u) => !u.startsWith(`${origin}/`));
  assert.deepEqual(offOrigin, [], `requests left ${origin}: ${report()}`);
  const unanswered = seen.answers.filter((a) => a.status !== 200 && a.status !== 304);
  assert.deepEqual(unanswered, [], `assets not answered 200: ${report()}`);
  assert.ok(seen.requests.some((u) => u.includes('/api/docs/static/swagger-ui-bundle.js')), `swagger-ui never loaded: ${report()}`);
  assert.ok(seen.requests.some((u) => u.endsWith('/api/docs/json')), `the document was never fetched: ${report()}`);
  const violations = seen.console.filter((m) => /Content Security Policy/i.test(m));
  assert.deepEqual(violations, [], 'the page broke its own Content-Security-Policy');

  assert.match(await page.title(), /netdiag/);
  const operations = await page.locator('.opblock').count();
  assert.ok(operations >= 18, `${operations} operations rendered (a blank page?): ${report()}`);

  // A try-it body holds a real example, not {"domain": "string"}.
  const dns = page.locator('.opblock', { has: page.locator('[data-path="/api/dns/lookup"]') }).first();
  await dns.locator('.opblock-summary').click();
  await dns.locator('.try-out__btn').click();
  const dnsBody = await dns.locator('textarea.body-param__text').inputValue();
  assert.match(dnsBody, /"domain": "example\.com"/);
  assert.doesNotMatch(dnsBody, /"string"/);
  assert.match((await dns.locator('.responses-wrapper').innerText()) ?? '', /93\.184\.215\.14/, 'the 200 example is not shown');

  const proxy = page.locator('.opblock', { has: page.locator('[data-path="/api/proxy/check"]') }).first();
  await proxy.locator('.opblock-summary').click();
  await proxy.locator('.try-out__btn').click();
  assert.match(await proxy.locator('textarea.body-param__text').inputValue(), /203\.0\.113\.7:8080:user:pass/);

  mkdirSync(OUTPUT, { recursive: true });
  await page.screenshot({ path: OUTPUT + screenshot, fullPage: true });
  t.diagnostic(`screenshot: test-output/${screenshot}`);
  assert.ok(seen.requests.every((u) => u.startsWith(`${origin}/`)), `requests left ${origin} while expanding: ${report()}`);
}

/** A TLS front on loopback that hands the decrypted bytes to the app, as a reverse proxy would. */
async function tlsFront(t: TestContext, appPort: number): Promise<number> {
  const dir = new URL('../fixtures/tls/', import.meta.url);
  const sockets = new Set<net.Socket>();
  const server = tls.createServer({ key: readFileSync(new URL('key.pem', dir)), cert: readFileSync(new URL('cert.pem', dir)) }, (client) => {
    const upstream = net.connect(appPort, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => sockets.delete(s));
    }
    client.pipe(upstream).pipe(client);
  });
  return listenUntilTestEnds(t, server, sockets);
}

test('the reference sends a CSP that keeps plain HTTP plain and allows nothing from another origin', async (t) => {
  const { url } = await build(t);
  const res = await fetch(`${url}/api/docs`);
  assert.equal(res.status, 200);
  const csp = res.headers.get('content-security-policy') ?? '';
  assert.match(csp, /default-src 'self'/);
  assert.doesNotMatch(csp, /upgrade-insecure-requests/, 'upgrade-insecure-requests turns every asset into https:// on an HTTP-only server');
  assert.doesNotMatch(csp, /https?:|\*|'unsafe-inline'|'unsafe-eval'/, `the CSP lets in more than this origin: ${csp}`);
  assert.match(await res.text(), /<title>netdiag API reference<\/title>/);
});

test('Chromium opens /api/docs by a host name over plain HTTP and HTTPS', { skip: noChromium }, async (t) => {
  const { url } = await build(t);
  const port = Number(new URL(url).port);
  const context = await launchChromium(t, { ignoreHTTPSErrors: true });
  await t.test('over HTTP', async (t) => openReference(t, context, `http://${HOST}:${port}`, 'docs.png'));
  const tlsPort = await tlsFront(t, port);
  await t.test('over HTTPS', async (t) => openReference(t, context, `https://${HOST}:${tlsPort}`, 'docs-https.png'));
});

test('at 375 px the reference fits the screen, links back to the dashboard and shows the jobs and the webhooks', { skip: noChromium }, async (t) => {
  const { url } = await build(t);
  const page = await (await launchChromium(t, { viewport: { width: 375, height: 800 } })).newPage();
  const origin = `http://${HOST}:${new URL(url).port}`;
  assert.equal((await page.goto(`${origin}/api/docs`, { waitUntil: 'load' }))?.status(), 200);
  assert.equal(await page.locator('meta[name="viewport"]').getAttribute('content'), 'width=device-width, initial-scale=1');
  await page.waitForFunction(() => document.querySelectorAll('.opblock').length >= 18);

  const back = page.locator('header.netdiag-bar a[href="/"]', { hasText: 'Dashboard' });
  assert.ok(await back.isVisible(), 'no visible link back to the dashboard');
  const box = await back.boundingBox();
  assert.ok(box && box.x >= 0 && box.x + box.width <= 375, `the dashboard link is off screen: ${JSON.stringify(box)}`);

  // The jobs' routes and the webhook events are drawn, each one operation of the page.
  for (const path of ['/api/jobs', '/api/jobs/{id}']) assert.ok(await page.locator(`.opblock [data-path="${path}"]`).count(), `${path} not shown`);
  const text = await page.locator('#swagger-ui').innerText();
  for (const event of ['job.succeeded', 'job.failed', 'job.cancelled']) assert.ok(text.includes(event), `webhook ${event} not shown`);

  // Expanded, an operation still fits: nothing makes the page scroll sideways.
  const scan = page.locator('.opblock', { has: page.locator('[data-path="/api/port/scan-range"]') }).first();
  await scan.locator('.opblock-summary').click();
  await page.waitForLoadState('networkidle');
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  mkdirSync(OUTPUT, { recursive: true });
  await page.screenshot({ path: `${OUTPUT}docs-375.png`, fullPage: false });
  t.diagnostic('screenshot: test-output/docs-375.png');
  assert.ok(overflow <= 0, `the page is ${overflow} px wider than the screen`);
});
