import autocannon, { type Result } from 'autocannon';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';

/**
 * On a 2-core machine the scheduler may put the server and the load generator on one core for a
 * whole run, which halves a figure at random. Where `taskset` exists, servers get core 0 and this
 * process (autocannon) core 1, so runs compare like with like.
 */
const PIN = (() => {
  try {
    execFileSync('taskset', ['-p', '-c', '1', String(process.pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

/**
 * The V8 flags `npm start` and bin/netdiag.js give the server, given to every benchmark server
 * (bare Fastify included) so both sides of a comparison run alike. BENCHMARKS.md, "Speed tricks",
 * row "--max-semi-space-size=64": with V8's default young generation, a server process falls into a
 * mode where per-request objects are pretenured and much of its CPU goes to garbage collection.
 */
export const SERVER_NODE_FLAGS = ['--max-semi-space-size=64'];

/** Shared pieces of the HTTP benchmarks: child servers and autocannon runs. */

export const BENCH_CONNECTIONS = 50;
export const BENCH_SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
export const WARMUP_SECONDS = 3;

export interface ChildServer {
  url: string;
  info: Record<string, string>;
  child: ChildProcess;
  stop(): Promise<void>;
}

/**
 * A variant of a benchmark's server, for a trick measured with and without it in the same run:
 * its label and the environment its server gets (see startServer for BENCH_ROOT and
 * BENCH_NODE_FLAGS). From BENCH_VS='label|NAME=value,NAME=value;label|…'.
 */
export interface Variant {
  label: string;
  env: Record<string, string>;
}

export function variants(spec = process.env.BENCH_VS ?? ''): Variant[] {
  return spec
    .split(';')
    .filter((v) => v.trim() !== '')
    .map((v) => {
      const [label, pairs = ''] = v.split('|');
      const env = Object.fromEntries(pairs.split(',').filter((p) => p !== '').map((p) => [p.slice(0, p.indexOf('=')), p.slice(p.indexOf('=') + 1)]));
      return { label: label!.trim(), env };
    });
}

/** This checkout's root: a script under it runs from BENCH_ROOT instead when that is given. */
const ROOT = new URL('..', import.meta.url).pathname;

/**
 * Starts a server script in its own process (so it has a core to itself and the load generator
 * the other); the script prints one JSON line `{"url": ..., ...}` when it listens. In `env`,
 * BENCH_ROOT names another checkout (a git worktree with this one's node_modules linked in) whose
 * copy of the script runs, and BENCH_NODE_FLAGS the V8 flags instead of SERVER_NODE_FLAGS ('' for
 * none): a trick's with and without in one run.
 */
export function startServer(script: string, env: Record<string, string> = {}): Promise<ChildServer> {
  let path = new URL(script, import.meta.url).pathname;
  if (env.BENCH_ROOT && path.startsWith(ROOT)) path = `${env.BENCH_ROOT.replace(/\/$/, '')}/${path.slice(ROOT.length)}`;
  const flags = env.BENCH_NODE_FLAGS === undefined ? SERVER_NODE_FLAGS : env.BENCH_NODE_FLAGS.split(' ').filter((f) => f !== '');
  const args = [...flags, '--import', 'tsx', path];
  const child = spawn(PIN ? 'taskset' : process.execPath, PIN ? ['-c', '0', process.execPath, ...args] : args, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      const line = out.split('\n').find((l) => l.startsWith('{"url"'));
      if (line) {
        // From here on the server's output is discarded unread, as a log collector would take it.
        child.stdout!.removeAllListeners('data');
        child.stdout!.resume();
        const info = JSON.parse(line) as Record<string, string>;
        resolve({
          url: info.url!,
          info,
          child,
          stop: () =>
            new Promise((done) => {
              child.once('exit', () => done());
              child.kill('SIGTERM');
            }),
        });
      }
    });
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}: ${out}`)));
  });
}

export type LoadResult = Result & {
  /** The server's CPU µs per request over the measured run (not the warm-up), where /proc exists. */
  serverCpuPerRequest: number | null;
};

/** A warm-up, then the measured run; `server` is the process whose CPU is counted. */
export async function load(
  url: string,
  headers: Record<string, string> = {},
  seconds = BENCH_SECONDS,
  extra: Partial<Parameters<typeof autocannon>[0]> = {},
  server?: ChildServer,
): Promise<LoadResult> {
  await autocannon({ url, headers, connections: BENCH_CONNECTIONS, duration: WARMUP_SECONDS, ...extra });
  const before = cpuMicros(server?.child.pid);
  const result = await autocannon({ url, headers, connections: BENCH_CONNECTIONS, duration: seconds, ...extra });
  const after = cpuMicros(server?.child.pid);
  const served = result.requests.total;
  return { ...result, serverCpuPerRequest: before !== null && after !== null && served > 0 ? (after - before) / served : null };
}

/**
 * CPU time (user + system) a process has used, in microseconds, from /proc (Linux); null elsewhere.
 * CPU per request is steadier than requests/s on a shared 2-core machine: it does not move when
 * the load generator or a neighbour takes the core for a while.
 */
export function cpuMicros(pid: number | undefined): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    // utime and stime are fields 14 and 15 of stat(5), in clock ticks (100 per second on Linux).
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  } catch {
    return null;
  }
}

export function summary(name: string, r: Result): string {
  return `${name}: ${Math.round(r.requests.average)} req/s, p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms, non-2xx ${r.non2xx}, errors ${r.errors}`;
}

/**
 * Signs in through the dashboard's login form as a browser does (its CSRF token, Origin, the
 * cookies it was given); the Cookie header a browser would then send. Throws unless it got 303.
 */
export async function signIn(url: string, email: string, password: string): Promise<string> {
  const cookies = new Map<string, string>();
  const keep = (res: Response) => {
    for (const line of res.headers.getSetCookie()) {
      const pair = line.split(';')[0]!;
      const eq = pair.indexOf('=');
      cookies.set(pair.slice(0, eq), pair.slice(eq + 1));
    }
  };
  const header = () => [...cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  const login = await fetch(`${url}/login`);
  keep(login);
  const csrf = /name="_csrf" value="([^"]*)"/.exec(await login.text())?.[1] ?? '';
  const res = await fetch(`${url}/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: url, cookie: header() },
    body: new URLSearchParams({ _csrf: csrf, email, password, next: '/' }),
  });
  keep(res);
  if (res.status !== 303) throw new Error(`sign-in failed: ${res.status}`);
  return header();
}
