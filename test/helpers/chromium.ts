import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { chromium, type BrowserContext } from 'playwright-core';

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
    args: [
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
    ],
  });
  t.after(async () => {
    await context.close();
    rmSync(profile, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
  });
  context.setDefaultTimeout(STEP_TIMEOUT_MS);
  context.setDefaultNavigationTimeout(STEP_TIMEOUT_MS);
  return context;
}
