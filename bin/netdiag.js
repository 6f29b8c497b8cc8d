#!/usr/bin/env -S node --max-semi-space-size=64
// --max-semi-space-size=64 (a 64 MiB young generation): kept for its figure, BENCHMARKS.md, "Speed tricks".
// Runs the TypeScript CLI through tsx, so a fresh clone needs no build step. Where compiled
// JavaScript sits beside the sources (the tree `npm test` compiles once per run,
// scripts/test-tree.mjs), it runs that instead, with no loader.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const source = (name) => {
  const compiled = fileURLToPath(new URL(`../src/${name}.js`, import.meta.url));
  return existsSync(compiled) ? compiled : fileURLToPath(new URL(`../src/${name}.ts`, import.meta.url));
};
const entry = source('cli');
if (entry.endsWith('.ts')) (await import('tsx/esm/api')).register();
const { runCli } = await import(entry);
const code = await runCli(process.argv.slice(2), {
  env: process.env,
  stdout: (t) => process.stdout.write(t),
  stderr: (t) => process.stderr.write(t),
  stdoutIsTTY: process.stdout.isTTY === true,
  stderrIsTTY: process.stderr.isTTY === true,
});
if ((process.argv[2] !== 'serve' && process.argv[2] !== 'worker') || code !== 0) process.exitCode = code;
