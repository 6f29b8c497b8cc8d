import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { AxeBuilder } from '@axe-core/playwright';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

/** Debian's chromium package; CHROMIUM_PATH points elsewhere (or at nothing, to see the skip). */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** The host name browser tests open: mapped to 127.0.0.1 inside the browser, every other name fails. */
export const TEST_HOST = 'netdiag.test';
/** Longest any one browser step may take, even on a loaded machine: nothing waits forever. */
export const STEP_TIMEOUT_MS = 30_000;

/** false when the browser is there; otherwise the skip reason `npm test` prints, naming what to install. */
export function chromiumMissing(what: string): string | false {
  return existsSync(CHROMIUM)
    ? false
    : `no browser at ${CHROMIUM}: ${what} skipped; install Debian's chromium package (apt-get install -y chromium; .ci/run does) to run it`;
}

/** Reaches nothing but loopback (TEST_HOST), never the internet: no background networking, no proxy, no QUIC. */
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-proxy-server',
  `--host-resolver-rules=MAP ${TEST_HOST} 127.0.0.1, MAP * ~NOTFOUND`,
];

/**
 * Headless Chromium with a fresh profile, closed when the test ends, that reaches nothing but
 * loopback (TEST_HOST) and never the internet (no background networking, no proxy, no QUIC).
 */
export async function launchChromium(t: TestContext, options: { viewport?: { width: number; height: number }; ignoreHTTPSErrors?: boolean } = {}): Promise<BrowserContext> {
  // One hook closes the browser and then removes its profile: a profile removed while Chromium
  // still writes to it fails the test (ENOTEMPTY).
  const profile = mkdtempSync(join(tmpdir(), 'netdiag-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    ...options,
    args: ARGS,
  });
  t.after(async () => {
    await context.close();
    rmSync(profile, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
  });
  context.setDefaultTimeout(STEP_TIMEOUT_MS);
  context.setDefaultNavigationTimeout(STEP_TIMEOUT_MS);
  return context;
}

/**
 * One headless Chromium for a test that needs several people (each a context of its own, as
 * isolated as a fresh profile: cookies, storage and cache are its own), closed when the test
 * ends. Starting the browser is the slow part; a context costs little.
 */
export async function launchBrowser(t: TestContext): Promise<Browser> {
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
  t.after(() => browser.close());
  return browser;
}

/** A fresh context (a person) in `browser`, with the same step timeouts as launchChromium's. */
export async function newContext(browser: Browser, options: { viewport?: { width: number; height: number }; ignoreHTTPSErrors?: boolean } = {}): Promise<BrowserContext> {
  const context = await browser.newContext(options);
  context.setDefaultTimeout(STEP_TIMEOUT_MS);
  context.setDefaultNavigationTimeout(STEP_TIMEOUT_MS);
  return context;
}

/** The accessibility rules every page must pass: WCAG 2.1 A and AA. */
export const WCAG = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];

/**
 * The page in the light and the dark scheme, each a full-page screenshot `<dir><name>[-dark].png`
 * and axe-core's verdict, asserted to find no WCAG 2.1 A/AA violation; left in the light scheme.
 * Calls `seen` with each scheme's number of violations (for tests that count what they checked).
 */
export async function auditSchemes(page: Page, dir: string, name: string, seen?: (scheme: 'light' | 'dark', violations: number) => void): Promise<void> {
  mkdirSync(dir, { recursive: true });
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.screenshot({ path: `${dir}${name}${scheme === 'dark' ? '-dark' : ''}.png`, fullPage: true });
    // Legacy mode runs axe.run in the page itself. The default opens a blank page to gather the
    // frames' results in, per call: 1,040 ms of CPU for a login page against 293 ms, with the same
    // verdict (the pages have no frames; CSP allows no other origin to frame).
    const { violations } = await new AxeBuilder({ page }).withTags(WCAG).setLegacyMode(true).analyze();
    const report = violations.map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
    assert.deepEqual(report, [], `${name} (${scheme}): WCAG 2.1 A/AA violations`);
    seen?.(scheme, violations.length);
  }
  await page.emulateMedia({ colorScheme: 'light' });
}

/**
 * Nothing on the page is wider than the screen (an element inside a box that scrolls sideways is
 * that box's business), and every button is within it; an element not shown (a closed <details>,
 * hidden) is not measured.
 */
export async function assertNotCut(page: Page, name: string): Promise<void> {
  const cut = await page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    const out: string[] = [];
    if (document.documentElement.scrollWidth > width) out.push(`the page scrolls sideways: ${document.documentElement.scrollWidth} > ${width}`);
    for (const el of document.querySelectorAll('main *, header *')) {
      const r = el.getBoundingClientRect();
      // Inside a closed <details> or hidden: not shown, not measured.
      if (r.width === 0 || r.height === 0) continue;
      let scrolls = false;
      for (let p = el.parentElement; p; p = p.parentElement) if (getComputedStyle(p).overflowX !== 'visible' && p.scrollWidth > p.clientWidth) scrolls = true;
      if (!scrolls && (r.right > width + 0.5 || r.left < -0.5)) out.push(`${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}.${el.className}: ${Math.round(r.left)}..${Math.round(r.right)}`);
    }
    for (const b of document.querySelectorAll('button, a.button, input[type="submit"]')) {
      const r = b.getBoundingClientRect();
      if (r.width === 0) continue;
      if (r.right > width + 0.5 || r.left < -0.5) out.push(`button "${(b.textContent ?? '').trim()}" is off-screen: ${Math.round(r.left)}..${Math.round(r.right)}`);
    }
    return out;
  });
  assert.deepEqual(cut, [], `${name}: cut off at this width`);
}
