#!/usr/bin/env -S node --max-semi-space-size=64
// Runs the TypeScript CLI through tsx, so a fresh clone needs no build step.
import { register } from 'tsx/esm/api';
import { fileURLToPath } from 'node:url';

register();
if (process.argv[2] === 'serve') {
  // Before the application's modules load: see src/lib/next-tick-warmup.ts.
  const { warmUpNextTick } = await import(fileURLToPath(new URL('../src/lib/next-tick-warmup.ts', import.meta.url)));
  await warmUpNextTick();
}
const { runCli } = await import(fileURLToPath(new URL('../src/cli.ts', import.meta.url)));
const code = await runCli(process.argv.slice(2), {
  env: process.env,
  stdout: (t) => process.stdout.write(t),
  stderr: (t) => process.stderr.write(t),
  stdoutIsTTY: process.stdout.isTTY === true,
  stderrIsTTY: process.stderr.isTTY === true,
});
if ((process.argv[2] !== 'serve' && process.argv[2] !== 'worker') || code !== 0) process.exitCode = code;
