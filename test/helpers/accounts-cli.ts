import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const bin = new URL('../../bin/netdiag.js', import.meta.url).pathname;
const run = promisify(execFile);

/** `netdiag account create` against DATABASE_URL, as an operator runs it; returns the account's token. */
export async function createAccountToken(databaseUrl: string, email: string, plan: string): Promise<string> {
  const { stdout } = await run(process.execPath, [bin, 'account', 'create', '--email', email, '--name', email, '--plan', plan], {
    env: { ...process.env, DATABASE_URL: databaseUrl },
  });
  return (JSON.parse(stdout) as { token: string }).token;
}

const shiftedClock = new URL('./shifted-clock.mjs', import.meta.url).pathname;

/**
 * The environment that starts `netdiag` processes (serve(env), test/helpers/serve.ts) with a clock
 * at second `second` of a minute (the next one's, so nothing it records predates what the test
 * wrote before): a test that needs one minute for its steps gets nearly all of it at once, rather
 * than waiting for the wall clock to reach an early second. Every process given the same
 * environment reads the same time, running on from there (test/helpers/shifted-clock.mjs).
 */
export function clockAtMinuteStart(second = 1): Record<string, string> {
  const now = Date.now();
  const shift = 60_000 - (now % 60_000) + second * 1_000;
  return {
    NODE_OPTIONS: [process.env.NODE_OPTIONS, `--import ${shiftedClock}`].filter(Boolean).join(' '),
    TEST_CLOCK_SHIFT_MS: String(shift),
  };
}
