import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { loadConfig } from '../../../src/config.js';
import { createDialer } from '../../../src/infra/net/dialer.js';
import { build } from '../../helpers/build.js';
import { TEST_HOST, assertNotCut, auditSchemes, chromiumMissing, launchBrowser, newContext } from '../../helpers/chromium.js';
import { startDnsServer } from '../../fixtures/dns-server.js';
import { PASSWORD, namedListeners, setPassword } from './browserless.js';

// Chromium process: one browser at a time (scripts/test-tree.mjs).

/**
 * The Checks section in Debian's Chromium, at 1280 px and at 375 px: a port scan of loopback
 * listeners (their services named in the result), a DNS lookup and an IP lookup, each followed
 * live on its job page until it shows the result, then the jobs list. Every page: axe-core finds
 * no WCAG 2.1 A/AA violation in the light or the dark scheme, nothing is wider than the screen,
 * every button is within it, and nothing is loaded from another origin. Screenshots go to
 * test-output/checks/ (ignored by git).
 */

const OUTPUT = fileURLToPath(new URL('../../../test-output/checks/', import.meta.url));
const noChromium = chromiumMissing("the Checks pages' browser test was");
const EMAIL = 'tester@example.com';

/** Axe in both schemes, a screenshot of each, and nothing cut off at this width. */
async function step(page: Page, name: string): Promise<void> {
  await auditSchemes(page, OUTPUT, name);
  await assertNotCut(page, name);
}

test('Checks in Chromium at 1280 and 375 px: port scan, DNS and IP lookups followed live to their results; no WCAG 2.1 A/AA violation, nothing cut off', { skip: noChromium, timeout: 240_000 }, async (t) => {
  const dns = await startDnsServer({ records: [{ name: 'example.test', type: 'A', ttl: 300, data: '192.0.2.10' }, { name: 'example.test', type: 'A', ttl: 300, data: '192.0.2.11' }] });
  t.after(() => dns.close());
  const env = { NETDIAG_ALLOW_TARGETS: '127.0.0.0/8', NETDIAG_DNS_SERVERS: `127.0.0.1:${dns.port}` };
  const b = await build(t, { env, deps: { dialer: createDialer(loadConfig(env)) } });
  await setPassword(b.store, EMAIL, PASSWORD);
  const open = await namedListeners(t, 2);
  const closed = await new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
  // A web server whose old address redirects once: the HTTP check form, left as it is, follows it as the API does.
  const web = http.createServer((req, res) => {
    if (req.url === '/old') res.writeHead(301, { location: '/new' }).end();
    else res.writeHead(200, { 'content-type': 'text/plain' }).end('hello');
  });
  await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => web.close(() => resolve())));
  const webPort = (web.address() as net.AddressInfo).port;
  const origin = `http://${TEST_HOST}:${new URL(b.url).port}`;
  const browser = await launchBrowser(t);

  for (const [width, height] of [[1280, 900], [375, 800]] as const) {
    const page = await (await newContext(browser, { viewport: { width, height } })).newPage();
    const foreign: string[] = [];
    const refused: string[] = [];
    page.on('request', (r) => {
      if (!r.url().startsWith(origin) && !r.url().startsWith('data:')) foreign.push(r.url());
    });
    page.on('console', (m) => {
      if (/Content Security Policy|Refused/i.test(m.text())) refused.push(m.text());
    });
    const at = (name: string) => `${width}-${name}`;
    await page.goto(`${origin}/login`);
    await page.getByLabel('E-mail').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await Promise.all([page.waitForEvent('load'), page.getByRole('button', { name: 'Sign in' }).click()]);

    await Promise.all([page.waitForEvent('load'), page.getByRole('link', { name: 'Checks', exact: true }).click()]);
    await step(page, at('01-checks'));

    // A scan of two named listeners and a closed port, followed live to its result.
    await Promise.all([page.waitForEvent('load'), page.getByRole('link', { name: 'TCP connect scan of up to 1000 ports' }).click()]);
    await page.getByLabel('Host', { exact: true }).fill('127.0.0.1');
    await page.getByLabel('Ports').fill([...open.map((o) => o.port), closed].join(','));
    await step(page, at('02-port-form'));
    await Promise.all([page.waitForURL(/\/jobs\/job_/), page.getByRole('button', { name: 'Run' }).click()]);
    await page.getByRole('heading', { name: 'Open ports (2)' }).waitFor();
    const ports = await page.locator('main').innerText();
    for (const o of open) assert.match(ports, new RegExp(`${o.port}\\s+${o.service}\\s+open`), `port ${o.port} is named ${o.service}`);
    assert.match(ports, /3 scanned: 2 open, 1 closed, 0 filtered/);
    await page.getByText('Show every port: open, closed and filtered').click();
    await step(page, at('03-port-result'));
    const scanUrl = page.url();

    // A DNS lookup.
    await page.goto(`${origin}/checks/dns-lookup`);
    await page.getByLabel('Domain').fill('example.test');
    await Promise.all([page.waitForURL(/\/jobs\/job_/), page.getByRole('button', { name: 'Run' }).click()]);
    await page.getByRole('heading', { name: 'Records (2)' }).waitFor();
    assert.match(await page.locator('main').innerText(), /A\s+\d+ s\s+192\.0\.2\.10/);
    await step(page, at('04-dns-result'));

    // An IP lookup: the place and the network from the bundled GeoIP data.
    await page.goto(`${origin}/checks/ip-lookup`);
    await page.getByLabel('IP', { exact: true }).fill('1.1.1.1');
    await Promise.all([page.waitForURL(/\/jobs\/job_/), page.getByRole('button', { name: 'Run' }).click()]);
    await page.getByRole('heading', { name: 'Network' }).waitFor();
    assert.match(await page.locator('main').innerText(), /AS13335/);
    await step(page, at('05-ip-result'));

    // An HTTP check with the form's defaults: the redirect followed, each timing with its unit.
    await page.goto(`${origin}/checks/http-check`);
    await page.getByLabel('URL', { exact: true }).fill(`http://127.0.0.1:${webPort}/old`);
    await Promise.all([page.waitForURL(/\/jobs\/job_/), page.getByRole('button', { name: 'Run' }).click()]);
    await page.getByRole('heading', { name: 'Redirects followed (1)' }).waitFor();
    const httpText = await page.locator('main').innerText();
    assert.match(httpText, /200 over HTTP\/1\.1/);
    assert.match(httpText, /Whole answer\s+[\d.]+ ms/);
    await step(page, at('05b-http-result'));

    // An IPv6 address written out in full.
    await page.goto(`${origin}/checks/ipv6-expand`);
    await page.getByLabel('IPv6', { exact: true }).fill('2001:db8::1');
    await Promise.all([page.waitForURL(/\/jobs\/job_/), page.getByRole('button', { name: 'Run' }).click()]);
    await page.getByText('2001:0db8:0000:0000:0000:0000:0000:0001', { exact: true }).waitFor();
    assert.match(await page.locator('main').innerText(), /Short form \(RFC 5952\)\s+2001:db8::1/);
    await step(page, at('05c-ipv6-result'));

    // The scan's page again, its JSON shown, and the jobs list.
    await page.goto(scanUrl);
    await page.getByText('Show the JSON of the result').click();
    await step(page, at('06-job-page'));
    await page.goto(`${origin}/jobs`);
    await step(page, at('07-jobs'));
    assert.deepEqual(foreign, [], 'nothing was loaded from another origin');
    assert.deepEqual(refused, [], 'no CSP refusal');
  }
});
