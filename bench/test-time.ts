/**
 * Where the test suite's time goes: every test file run alone, one after the other, under
 * `/usr/bin/time`, so each file gets its own wall time and CPU (user + sys of the test process
 * and the children it waited for; PostgreSQL and Redis are not counted). On a shared machine
 * wall time is noise, CPU is the figure to compare.
 *
 *   node --import tsx bench/test-time.ts                  (all files, as `npm test` lists them)
 *   TEST_TIME_FILES='regex' node --import tsx bench/test-time.ts   (the files whose path matches)
 *   TEST_TIME_OUT=file.tsv                                (also write the raw rows)
 *
 * It also measures the bare cost of one test process (a trivial test file) and prints it × the
 * number of files: what the runner's process-per-file costs before any test runs.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const env = {
  ...process.env,
  TEST_DATABASE_URL: process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
  TEST_REDIS_URL: process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/15',
};

/** The files in `npm test`'s order: test/*.test.ts, then the deeper ones sorted. */
function testFiles(): string[] {
  const top = readdirSync('test').filter((f) => f.endsWith('.test.ts')).sort().map((f) => `test/${f}`);
  const deeper: string[] = [];
  const walk = (dir: string, depth: number): void => {
    for (const name of readdirSync(dir)) {
      const path = `${dir}/${name}`;
      if (statSync(path).isDirectory()) walk(path, depth + 1);
      else if (depth > 0 && name.endsWith('.test.ts')) deeper.push(path);
    }
  };
  walk('test', 0);
  return [...top, ...deeper.sort()];
}

interface Row {
  file: string;
  wall: number;
  user: number;
  sys: number;
  ok: boolean;
}

function timed(file: string): Promise<Row> {
  return new Promise((resolve) => {
    const child = spawn('/usr/bin/time', ['-f', 'TIME %e %U %S', 'node', '--import', 'tsx', '--test', file], {
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (chunk: Buffer) => {
      err = (err + chunk.toString()).slice(-4000);
    });
    child.on('close', (code) => {
      const m = /TIME ([\d.]+) ([\d.]+) ([\d.]+)\s*$/.exec(err);
      const [wall, user, sys] = m ? [Number(m[1]), Number(m[2]), Number(m[3])] : [NaN, NaN, NaN];
      resolve({ file, wall, user, sys, ok: code === 0 });
    });
  });
}

const filter = process.env.TEST_TIME_FILES ? new RegExp(process.env.TEST_TIME_FILES) : null;
const files = testFiles().filter((f) => !filter || filter.test(f));

const dir = mkdtempSync(join(tmpdir(), 'netdiag-test-time-'));
const trivial = join(dir, 'trivial.test.ts');
writeFileSync(trivial, "import { test } from 'node:test';\ntest('nothing', () => {});\n");
const bare: Row[] = [];
for (let i = 0; i < 3; i++) bare.push(await timed(trivial));
rmSync(dir, { recursive: true, force: true });

const rows: Row[] = [];
for (const file of files) {
  const row = await timed(file);
  rows.push(row);
  process.stderr.write(`${row.ok ? 'ok  ' : 'FAIL'} ${row.file} ${row.wall}s wall ${(row.user + row.sys).toFixed(2)}s cpu\n`);
}

const cpu = (r: Row): number => r.user + r.sys;
const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);
const bareCpu = Math.min(...bare.map(cpu));
const bareWall = Math.min(...bare.map((r) => r.wall));
const line = (r: Row): string => `| ${r.file} | ${cpu(r).toFixed(2)} | ${r.wall.toFixed(2)} | ${r.ok ? '' : 'FAIL'} |`;

const out = [
  `node ${execFileSync('node', ['--version']).toString().trim()}, ${files.length} files, run one after the other`,
  `total CPU ${sum(rows.map(cpu)).toFixed(1)} s (user ${sum(rows.map((r) => r.user)).toFixed(1)}, sys ${sum(rows.map((r) => r.sys)).toFixed(1)}), total wall ${sum(rows.map((r) => r.wall)).toFixed(1)} s, failed ${rows.filter((r) => !r.ok).length}`,
  `bare test process (trivial file): ${bareCpu.toFixed(2)} s CPU, ${bareWall.toFixed(2)} s wall; × ${files.length} files = ${(bareCpu * files.length).toFixed(1)} s CPU`,
  `idle (wall − CPU, summed where positive): ${sum(rows.map((r) => Math.max(0, r.wall - cpu(r)))).toFixed(1)} s`,
  '',
  'by CPU (s):',
  '| file | CPU | wall | |',
  '|---|---|---|---|',
  ...[...rows].sort((a, b) => cpu(b) - cpu(a)).map(line),
  '',
  'by wall − CPU (idle, s):',
  '| file | CPU | wall | |',
  '|---|---|---|---|',
  ...[...rows].sort((a, b) => b.wall - cpu(b) - (a.wall - cpu(a))).slice(0, 30).map(line),
].join('\n');
console.log(out);
if (process.env.TEST_TIME_OUT) {
  writeFileSync(process.env.TEST_TIME_OUT, rows.map((r) => `${r.file}\t${r.user}\t${r.sys}\t${r.wall}\t${r.ok}`).join('\n') + '\n');
}
