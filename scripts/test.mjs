// `npm test`: ESLint, the type check and the whole suite; fails when any of the three does.
//
// The suite runs on a compiled copy of the package (scripts/test-tree.mjs writes it to
// `.test-build/`, its JavaScript by esbuild, without a type check). The type check
// (`tsc --noEmit`, ~11 s) and ESLint (~7 s) then run beside the suite instead of before it, at
// the lowest CPU priority, so that they take the cores in the moments the suite's processes wait
// (on child servers, timers, Chromium) rather than slow it. Their output is printed after the
// suite's summary. Measured on the 2-core machine: see BENCHMARKS.md, "Test suite time".
// Plain JavaScript, run with no loader.
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { setPriority } from 'node:os';
import { join } from 'node:path';

const LOWEST_PRIORITY = 19;
/** Test processes at once: the suite is CPU-bound on two cores (test phase, 16:40-17:00: 4 → 168-170 s, 6 → 177 s, 8 → 216 s). */
const SUITE_CONCURRENCY = 4;

const { ROOT, TREE, CACHE, DURATIONS } = await import('./test-tree.mjs');

/** Runs `args` with node; resolves with its exit code and, unless `inherit`, what it printed. */
function run(args, { inherit = false, lowPriority = false } = {}) {
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: inherit ? 'inherit' : ['ignore', 'pipe', 'pipe'] });
  if (lowPriority) {
    try {
      setPriority(child.pid, LOWEST_PRIORITY);
    } catch {
      // Not allowed here: it then competes as an equal, which costs time, not correctness.
    }
  }
  let output = '';
  child.stdout?.setEncoding('utf8').on('data', (d) => (output += d));
  child.stderr?.setEncoding('utf8').on('data', (d) => (output += d));
  return new Promise((resolve) => {
    child.on('error', (err) => resolve({ code: 1, output: `${output}${err.message}\n` }));
    child.on('close', (code, signal) => resolve({ code: code ?? 1, output: signal ? `${output}killed by ${signal}\n` : output }));
  });
}

// Both keep what they learnt for the next run where npm's tools keep theirs (node_modules/.cache):
// a run after a small change re-checks only what the change touches (ESLint 8 s → 1 s of CPU,
// tsc 15 s → 4 s). A fresh clone has no cache and checks everything.
const checks = [
  ['ESLint', run([join(ROOT, 'node_modules/eslint/bin/eslint.js'), '--cache', '--cache-location', join(CACHE, 'eslint/'), '.'], { lowPriority: true })],
  [
    'Type check (tsc --noEmit)',
    run([join(ROOT, 'node_modules/typescript/bin/tsc'), '--noEmit', '--incremental', '--tsBuildInfoFile', join(CACHE, 'tsc.tsbuildinfo')], { lowPriority: true }),
  ],
];
const files = readFileSync(join(TREE, 'test-files.txt'), 'utf8').split('\n').filter(Boolean);
mkdirSync(CACHE, { recursive: true });
// Node's own reporter as it would pick it (spec on a terminal, TAP otherwise), and each file's time for the next run.
const reporters = [`--test-reporter=${process.stdout.isTTY ? 'spec' : 'tap'}`, '--test-reporter-destination=stdout'];
reporters.push(`--test-reporter=${join(ROOT, 'scripts', 'test-durations.mjs')}`, `--test-reporter-destination=${DURATIONS}`);
const suite = await run(['--test', `--test-concurrency=${SUITE_CONCURRENCY}`, ...reporters, ...files], { inherit: true });

let failed = suite.code !== 0;
for (const [name, done] of checks) {
  const { code, output } = await done;
  process.stdout.write(`# ${name}: ${code === 0 ? 'passed' : `FAILED (exit ${code})`}\n${output}`);
  failed ||= code !== 0;
}
process.exitCode = failed ? 1 : 0;
