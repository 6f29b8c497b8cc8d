import { spawn, type ChildProcess } from 'node:child_process';

const bin = new URL('../../bin/netdiag.js', import.meta.url).pathname;

export interface Served {
  child: ChildProcess;
  port: number;
  /** The token printed by a first start on an empty database. */
  token: string | null;
  stdout: () => string;
  /** Settles with the exit code once the process has exited and its output is all read (listened for from the start). */
  exited: Promise<number | null>;
}

/**
 * `netdiag serve` as a user runs it, on 127.0.0.1 and a free port. Resolves once it listens and,
 * when `expectToken`, once the first-start token has been printed.
 */
export function serve(dbPath: string, expectToken: boolean, env: Record<string, string> = {}): Promise<Served> {
  const child = spawn(process.execPath, [bin, 'serve'], {
    env: { ...process.env, DATABASE_URL: `sqlite:${dbPath}`, PORT: '0', HOST: '127.0.0.1', NETDIAG_DNS_SERVERS: '127.0.0.1:1', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  // 'close', not 'exit': by then stdout is read to its end, so what the process printed last is in stdout().
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const onData = (chunk: string) => {
      out += chunk;
      const port = /listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(out)?.[1];
      const token = /Try it:.*\b(nd_[0-9A-Za-z]+)/.exec(out)?.[1] ?? null;
      if (port && (!expectToken || token)) {
        child.off('exit', onExit);
        resolve({ child, port: Number(port), token, stdout: () => out, exited });
      }
    };
    const onExit = (code: number | null) => reject(new Error(`netdiag serve exited with ${code} before it was ready: ${out}`));
    child.stdout!.setEncoding('utf8').on('data', onData);
    child.once('exit', onExit);
  });
}
