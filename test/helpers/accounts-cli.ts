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

/** Waits, when the current UTC minute is past `latestSecond`, for the next one: a test that needs one minute for its steps starts early in it. */
export async function earlyInMinute(latestSecond: number): Promise<void> {
  const second = new Date().getUTCSeconds();
  if (second > latestSecond) await new Promise((r) => setTimeout(r, (60 - second) * 1000 + 50));
}
