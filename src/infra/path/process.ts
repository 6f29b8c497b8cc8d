import { spawn as nodeSpawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { StringDecoder } from 'node:string_decoder';
import { KILL_GRACE_MS, MAX_LINE_CHARS, MAX_STDERR_BYTES, MAX_STDOUT_BYTES, TOOL_ENV } from './defaults.js';

/**
 * One run of a path tool program: spawned with an argument list (never a shell), its own
 * process group (so whatever it starts, such as mtr's mtr-packet, ends with it), the C locale and
 * nothing else of our environment; its output bounded; killed (SIGTERM, then SIGKILL after a
 * grace) at its deadline, when its output passes the bound, or when the caller aborts. The
 * promise settles only once the program is gone, so a slot of the process budget held around it
 * is never given back while the program still runs.
 */

/** child_process.spawn's shape: the seam where tests run the programs inside a network namespace (`ip netns exec`). */
export type SpawnFn = (file: string, args: readonly string[], options: SpawnOptions) => ChildProcess;

export interface ProcessSpec {
  file: string;
  args: readonly string[];
  deadlineMs: number;
  /** Kills the program; the run then rejects with the signal's reason (once the program is gone). */
  signal?: AbortSignal | undefined;
  /** Each line of standard output as it arrives, without its newline; a line over MAX_LINE_CHARS is skipped. */
  onLine?: ((line: string) => void) | undefined;
  /** Keep standard output whole in `stdout` (mtr's report); otherwise it is only told line by line. */
  collectStdout?: boolean | undefined;
  spawn?: SpawnFn | undefined;
  maxStdoutBytes?: number | undefined;
  maxStderrBytes?: number | undefined;
  killGraceMs?: number | undefined;
}

export interface ProcessOutcome {
  /** The exit code; null when a signal ended it or it never started. */
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Standard output when `collectStdout`, else ''. */
  stdout: string;
  /** Standard error (bounded), for messages. */
  stderr: string;
  /** Why this side killed it: its deadline, or more output than the bound; null when it ended on its own. */
  killed: 'deadline' | 'output' | null;
  /** The program could not be started (ENOENT: not installed, EACCES: not executable). */
  startError: NodeJS.ErrnoException | null;
}

/** Splits a stream of text into lines, skipping (not buffering) any line longer than `max`. */
export class LineSplitter {
  #partial = '';
  #skipping = false;

  constructor(
    private readonly onLine: (line: string) => void,
    private readonly max: number = MAX_LINE_CHARS,
  ) {}

  write(text: string): void {
    let start = 0;
    for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', start)) {
      const piece = text.slice(start, nl);
      start = nl + 1;
      if (this.#skipping || this.#partial.length + piece.length > this.max) {
        this.#skipping = false;
        this.#partial = '';
        continue;
      }
      const line = this.#partial + piece;
      this.#partial = '';
      this.onLine(line.endsWith('\r') ? line.slice(0, -1) : line);
    }
    const rest = text.slice(start);
    if (this.#skipping) return;
    if (this.#partial.length + rest.length > this.max) {
      this.#partial = '';
      this.#skipping = true;
    } else {
      this.#partial += rest;
    }
  }

  /** The last line, when the output did not end with a newline. */
  end(): void {
    if (!this.#skipping && this.#partial !== '') this.onLine(this.#partial);
    this.#partial = '';
    this.#skipping = false;
  }
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    // The whole group: the program and whatever it started.
    process.kill(-child.pid, signal);
  } catch {
    try {
      child.kill(signal);
    } catch {
      // Already gone.
    }
  }
}

export function runProcess(spec: ProcessSpec): Promise<ProcessOutcome> {
  const signal = spec.signal;
  if (signal?.aborted) return Promise.reject(signal.reason);
  const maxStdout = spec.maxStdoutBytes ?? MAX_STDOUT_BYTES;
  const maxStderr = spec.maxStderrBytes ?? MAX_STDERR_BYTES;
  const grace = spec.killGraceMs ?? KILL_GRACE_MS;
  const spawn = spec.spawn ?? (nodeSpawn as SpawnFn);

  return new Promise((resolve, reject) => {
    let child: ChildProcess;
    const outcome: ProcessOutcome = { code: null, signal: null, stdout: '', stderr: '', killed: null, startError: null };
    try {
      child = spawn(spec.file, spec.args, { shell: false, detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...TOOL_ENV }, windowsHide: true });
    } catch (err) {
      outcome.startError = err as NodeJS.ErrnoException;
      resolve(outcome);
      return;
    }
    let aborted = false;
    let settled = false;
    let graceTimer: NodeJS.Timeout | undefined;
    let stdoutBytes = 0;
    let stderrBytes = 0;
    const lines = spec.onLine ? new LineSplitter(spec.onLine) : null;
    const outDecoder = new StringDecoder('utf8');
    const errDecoder = new StringDecoder('utf8');

    const stop = (why: 'deadline' | 'output' | 'abort'): void => {
      if (graceTimer !== undefined || settled) return;
      if (why === 'abort') aborted = true;
      else outcome.killed ??= why;
      killGroup(child, 'SIGTERM');
      graceTimer = setTimeout(() => killGroup(child, 'SIGKILL'), grace);
    };
    const deadline = setTimeout(() => stop('deadline'), spec.deadlineMs);
    const onAbort = (): void => stop('abort');
    signal?.addEventListener('abort', onAbort, { once: true });

    child.stdout!.on('data', (chunk: Buffer) => {
      if (graceTimer !== undefined) return;
      stdoutBytes += chunk.length;
      if (stdoutBytes > maxStdout) return stop('output');
      const text = outDecoder.write(chunk);
      if (spec.collectStdout) outcome.stdout += text;
      lines?.write(text);
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      if (graceTimer !== undefined) return;
      stderrBytes += chunk.length;
      if (stderrBytes > maxStderr) return stop('output');
      outcome.stderr += errDecoder.write(chunk);
    });

    const finish = (): void => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      clearTimeout(graceTimer);
      signal?.removeEventListener('abort', onAbort);
      if (aborted) return reject(signal!.reason);
      const tail = outDecoder.end();
      if (spec.collectStdout) outcome.stdout += tail;
      lines?.write(tail);
      lines?.end();
      outcome.stderr += errDecoder.end();
      resolve(outcome);
    };
    child.on('error', (err: NodeJS.ErrnoException) => {
      // A program that never started has no close to wait for.
      if (child.pid === undefined) {
        outcome.startError = err;
        finish();
      }
    });
    child.on('close', (code, sig) => {
      outcome.code = code;
      outcome.signal = sig;
      finish();
    });
  });
}
