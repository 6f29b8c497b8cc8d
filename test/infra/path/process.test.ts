import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { test } from 'node:test';
import { LineSplitter, runProcess, type SpawnFn } from '../../../src/infra/path/process.js';
import { TOOL_ENV } from '../../../src/infra/path/defaults.js';
import { eventually } from '../../helpers/eventually.js';

/**
 * The runner's processes, with `node -e` standing in for the programs: lines as they come,
 * bounded output, the deadline, an abort, SIGKILL after the grace, the whole process group, no
 * shell and none of our environment. Every wait is on the process's own end.
 */

const NODE = process.execPath;

/** Spawns as the runner asks, keeping the child for the test to look at. */
function watched(): { spawn: SpawnFn; child: () => ChildProcess } {
  let last: ChildProcess | undefined;
  return {
    spawn: (file, args, options) => (last = spawn(file, args, options)),
    child: () => last!,
  };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

test('standard output is told line by line; a last line without its newline too', async () => {
  const seen: string[] = [];
  const out = await runProcess({ file: NODE, args: ['-e', 'process.stdout.write("a\\nb\\r\\n\\nc")'], deadlineMs: 30_000, onLine: (l) => seen.push(l) });
  assert.deepEqual(seen, ['a', 'b', '', 'c']);
  assert.equal(out.code, 0);
  assert.equal(out.killed, null);
  assert.equal(out.stdout, '', 'kept only when asked');
});

test('a line over the bound is skipped, not buffered; the lines around it are read', () => {
  const seen: string[] = [];
  const split = new LineSplitter((l) => seen.push(l), 10);
  split.write('short\n0123456');
  split.write('789abcdef');
  split.write('ghi\nnext\n');
  split.write('x'.repeat(50));
  split.end();
  assert.deepEqual(seen, ['short', 'next']);
});

test('standard output kept whole when asked, and the exit code and standard error', async () => {
  const out = await runProcess({ file: NODE, args: ['-e', 'console.log("{}"); console.error("oops"); process.exit(3)'], deadlineMs: 30_000, collectStdout: true });
  assert.deepEqual([out.stdout, out.stderr, out.code, out.signal], ['{}\n', 'oops\n', 3, null]);
});

test('arguments reach the program as they are, without a shell; the environment is the C locale and a PATH only', async () => {
  const out = await runProcess({
    file: NODE,
    args: ['-e', 'console.log(JSON.stringify({ argv: process.argv.slice(1), env: process.env }))', '; echo hi', '$(id)', '*'],
    deadlineMs: 30_000,
    collectStdout: true,
  });
  const seen = JSON.parse(out.stdout) as { argv: string[]; env: Record<string, string> };
  assert.deepEqual(seen.argv, ['; echo hi', '$(id)', '*']);
  assert.deepEqual(seen.env, TOOL_ENV);
});

test('more output than the bound: the program is killed and the run says so', async () => {
  const out = await runProcess({ file: NODE, args: ['-e', 'const b = "x".repeat(65536); setInterval(() => process.stdout.write(b), 1)'], deadlineMs: 60_000, maxStdoutBytes: 200_000 });
  assert.equal(out.killed, 'output');
  assert.equal(out.signal, 'SIGTERM');
});

test('too much on standard error is killed as well', async () => {
  const out = await runProcess({ file: NODE, args: ['-e', 'const b = "x".repeat(65536); setInterval(() => process.stderr.write(b), 1)'], deadlineMs: 60_000, maxStderrBytes: 100_000 });
  assert.equal(out.killed, 'output');
  assert.ok(out.stderr.length <= 100_000);
});

test('at its deadline the program is killed; what it printed before is kept', async () => {
  const seen: string[] = [];
  const out = await runProcess({ file: NODE, args: ['-e', 'console.log("hop 1"); setInterval(() => {}, 1000)'], deadlineMs: 300, onLine: (l) => seen.push(l) });
  assert.equal(out.killed, 'deadline');
  assert.equal(out.signal, 'SIGTERM');
  assert.deepEqual(seen, ['hop 1']);
});

test('a program that ignores SIGTERM gets SIGKILL after the grace', async () => {
  const w = watched();
  const controller = new AbortController();
  const run = runProcess({
    file: NODE,
    args: ['-e', 'process.on("SIGTERM", () => {}); console.log("ready"); setInterval(() => {}, 1000)'],
    deadlineMs: 60_000,
    killGraceMs: 50,
    spawn: w.spawn,
    signal: controller.signal,
    // Aborted once the handler is in place: its first line says so.
    onLine: () => controller.abort(new Error('stop')),
  });
  await assert.rejects(run, /stop/);
  assert.equal(w.child().signalCode, 'SIGKILL');
});

test('an abort kills the whole process group and rejects with its reason once they are gone', async () => {
  const w = watched();
  const controller = new AbortController();
  let grandchild = 0;
  const run = runProcess({
    file: NODE,
    args: ['-e', 'const c = require("child_process").spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" }); console.log(c.pid); setInterval(() => {}, 1000)'],
    deadlineMs: 60_000,
    spawn: w.spawn,
    signal: controller.signal,
    onLine: (line) => {
      grandchild = Number(line);
      controller.abort(new Error('client gone'));
    },
  });
  await assert.rejects(run, /client gone/);
  const child = w.child();
  assert.ok(child.exitCode !== null || child.signalCode !== null, 'the program is gone when the run settles');
  assert.ok(grandchild > 0);
  // The grandchild got the same SIGTERM; it is reaped by init, so wait for it to be gone.
  await eventually(() => !alive(grandchild), { what: 'the program\'s own child to be gone too' });
});

test('an aborted signal spawns nothing', async () => {
  const w = watched();
  await assert.rejects(runProcess({ file: NODE, args: ['-e', ''], deadlineMs: 1000, spawn: w.spawn, signal: AbortSignal.abort(new Error('late')) }), /late/);
  assert.equal(w.child(), undefined);
});

test('a program that is not there: startError, nothing thrown', async () => {
  const out = await runProcess({ file: '/nonexistent/ping', args: [], deadlineMs: 1000 });
  assert.equal(out.startError?.code, 'ENOENT');
  assert.equal(out.code, null);
});
