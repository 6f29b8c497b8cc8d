import { constants } from 'node:fs';
import { access, realpath } from 'node:fs/promises';
import type { CheckedAddress } from '../../domain/dialer.js';
import type {
  MtrRequest,
  MtrRun,
  PathProtocol,
  PathToolName,
  PathToolRunner,
  PathToolsAvailability,
  PingReply,
  PingRequest,
  PingRun,
  RunOptions,
  ToolAvailability,
  TraceHopLine,
  TracerouteAvailability,
  TracerouteRequest,
  TracerouteRun,
} from '../../domain/path/types.js';
import { PathToolError } from '../../errors.js';
import { mtrArgs, pingArgs, tracerouteArgs } from './args.js';
import {
  AVAILABILITY_TTL_MS,
  MAX_STDOUT_BYTES,
  MTR_DEADLINE_MS,
  MTR_PATHS,
  PING_DEADLINE_MS,
  PING_PATHS,
  SELF_TEST_DEADLINE_MS,
  STDERR_QUOTE_CHARS,
  TRACEROUTE_DEADLINE_MS,
  TRACEROUTE_PATHS,
} from './defaults.js';
import { parseMtrJson } from './mtr-output.js';
import { parsePingLine } from './ping-output.js';
import { runProcess, type ProcessOutcome, type SpawnFn } from './process.js';
import { parseTracerouteLine } from './traceroute-output.js';

/**
 * The path tools' runner (docs/path-tools.md): which programs exist here and may send raw packets
 * (tried once on 127.0.0.1, the report kept AVAILABILITY_TTL_MS), and each run of them with the
 * argument lists of args.ts, read by the parsers beside it.
 */

export interface PathRunnerOptions {
  /** How programs are started; default child_process.spawn. Tests pass one that runs them in a network namespace. */
  spawn?: SpawnFn | undefined;
  /** A program's path instead of the first of its default places that exists. */
  programs?: Partial<Record<PathToolName, string>> | undefined;
  /** Shorter deadlines than the defaults (tests). */
  deadlinesMs?: Partial<Record<PathToolName, number>> | undefined;
  availabilityTtlMs?: number | undefined;
  /** The clock the availability report ages by; default Date.now. */
  now?: (() => number) | undefined;
}

const DEFAULT_PATHS: Record<PathToolName, readonly string[]> = { ping: PING_PATHS, traceroute: TRACEROUTE_PATHS, mtr: MTR_PATHS };
const DEFAULT_DEADLINES: Record<PathToolName, number> = { ping: PING_DEADLINE_MS, traceroute: TRACEROUTE_DEADLINE_MS, mtr: MTR_DEADLINE_MS };
const PACKAGES: Record<PathToolName, string> = { ping: 'iputils-ping', traceroute: 'traceroute', mtr: 'mtr-tiny' };

/** What each program prints for its version (`-V`, `-V`, `-v`), to know it is the one whose output the parsers read. */
const VERSIONS: Record<PathToolName, { flag: string; says: string; is: string }> = {
  ping: { flag: '-V', says: 'iputils', is: 'iputils ping' },
  traceroute: { flag: '-V', says: 'Modern traceroute for Linux', is: 'Modern traceroute for Linux (the Debian package traceroute)' },
  mtr: { flag: '-v', says: 'mtr 0.', is: 'mtr 0.9x (the Debian package mtr-tiny or mtr)' },
};

const LOOPBACK = '127.0.0.1' as CheckedAddress;

/** What a program complained with: its first lines of standard error (ping says why in its second and third), bounded. */
function complaint(out: ProcessOutcome): string {
  const line = out.stderr.split('\n').map((l) => l.trim()).filter((l) => l !== '').slice(0, 3).join('; ');
  const text = line.length > STDERR_QUOTE_CHARS ? `${line.slice(0, STDERR_QUOTE_CHARS)}...` : line;
  if (text !== '') return text;
  return out.signal !== null ? `killed by ${out.signal}` : `exit code ${out.code}`;
}

function noRoute(out: ProcessOutcome): boolean {
  return out.stderr.includes('Network is unreachable') || out.stderr.includes('No route to host');
}

/** The failures every run shares: could not start, killed by us or by someone else. */
function failure(tool: PathToolName, out: ProcessOutcome, deadlineMs: number): PathToolError | null {
  if (out.startError) return new PathToolError(tool, 'failed', `could not be started: ${out.startError.code ?? out.startError.message}`);
  if (out.killed === 'output') return new PathToolError(tool, 'failed', `printed more than ${MAX_STDOUT_BYTES} bytes and was stopped`);
  if (out.killed === 'deadline') return new PathToolError(tool, 'busy', `did not finish within ${deadlineMs / 1000} s and was stopped`);
  if (out.signal !== null) return new PathToolError(tool, 'failed', `was killed by ${out.signal}`);
  return null;
}

function privilegeHint(tool: PathToolName, program: string): string {
  if (tool === 'ping') {
    return `give it CAP_NET_RAW (setcap cap_net_raw+ep ${program}), run netdiag as root, or let netdiag's group open ICMP sockets (sysctl net.ipv4.ping_group_range="<gid> <gid>")`;
  }
  if (tool === 'traceroute') return `give it CAP_NET_RAW (setcap cap_net_raw+ep ${program}) or run netdiag as root`;
  return 'give mtr-packet CAP_NET_RAW (setcap cap_net_raw+ep /usr/bin/mtr-packet, as the mtr-tiny package does) or run netdiag as root';
}

export class PathRunner implements PathToolRunner {
  readonly #spawn: SpawnFn | undefined;
  readonly #programs: Partial<Record<PathToolName, string>>;
  readonly #deadlines: Record<PathToolName, number>;
  readonly #ttl: number;
  readonly #now: () => number;
  #report: { at: number; report: Promise<PathToolsAvailability> } | null = null;
  /** The last report that came in. */
  #settled: PathToolsAvailability | null = null;
  /** The program each tool runs, as found by the last availability check. */
  #found: Partial<Record<PathToolName, string>> = {};

  constructor(opts: PathRunnerOptions = {}) {
    this.#spawn = opts.spawn;
    this.#programs = opts.programs ?? {};
    this.#deadlines = { ...DEFAULT_DEADLINES, ...opts.deadlinesMs };
    this.#ttl = opts.availabilityTtlMs ?? AVAILABILITY_TTL_MS;
    this.#now = opts.now ?? Date.now;
  }

  /**
   * Which tools run here; tried at first use and again once the report is AVAILABILITY_TTL_MS
   * old. While a new check runs (some 3 s: mtr's grace), the last report answers, so neither a
   * call nor /readyz waits on it.
   */
  availability(): Promise<PathToolsAvailability> {
    const now = this.#now();
    if (this.#report === null || now - this.#report.at >= this.#ttl) {
      const report = this.#check();
      const previous = this.#settled;
      report.then(
        (r) => {
          this.#settled = r;
        },
        // A check that failed outright (it should not) is not kept: the next call tries again.
        () => {
          if (this.#report?.report === report) this.#report = null;
        },
      );
      this.#report = { at: now, report };
      if (previous !== null) return Promise.resolve(previous);
    }
    return this.#settled === null ? this.#report.report : Promise.resolve(this.#settled);
  }

  async ping(req: PingRequest, opts: RunOptions & { onReply?: (reply: PingReply) => void }): Promise<PingRun> {
    const replies: PingReply[] = [];
    let transmitted: number | null = null;
    const deadlineMs = this.#deadlines.ping;
    const out = await runProcess({
      file: await this.#program('ping'),
      args: pingArgs(req),
      deadlineMs,
      signal: opts.signal,
      spawn: this.#spawn,
      onLine: (line) => {
        const parsed = parsePingLine(line);
        if (parsed?.kind === 'transmitted') transmitted = parsed.count;
        if (parsed?.kind === 'reply') {
          replies.push(parsed.reply);
          opts.onReply?.(parsed.reply);
        }
      },
    });
    const failed = failure('ping', out, deadlineMs);
    if (failed) throw failed;
    // 0: replies came; 1: none did (a diagnosis, not a failure); anything else is an error of ping's.
    if (out.code !== 0 && out.code !== 1) {
      if (noRoute(out)) throw new PathToolError('ping', 'no_route', `this server has no route to ${req.address}`);
      throw new PathToolError('ping', 'failed', complaint(out));
    }
    return { transmitted, replies };
  }

  async traceroute(req: TracerouteRequest, opts: RunOptions & { onHop?: (hop: TraceHopLine) => void }): Promise<TracerouteRun> {
    const hops: TraceHopLine[] = [];
    const deadlineMs = this.#deadlines.traceroute;
    const out = await runProcess({
      file: await this.#program('traceroute'),
      args: tracerouteArgs(req),
      deadlineMs,
      signal: opts.signal,
      spawn: this.#spawn,
      onLine: (line) => {
        const hop = parseTracerouteLine(line);
        // Each TTL once, in order: anything else is not a hop line of this run.
        if (hop === null || hop.ttl !== hops.length + 1 || hop.probes.length > req.queries) return;
        hops.push(hop);
        opts.onHop?.(hop);
      },
    });
    // Stopped at its deadline, the hops it printed are still the path as far as it got.
    if (out.killed === 'deadline' && hops.length > 0) {
      return { hops, unfinished: `traceroute did not finish within ${deadlineMs / 1000} s; the hops it printed by then are shown` };
    }
    const failed = failure('traceroute', out, deadlineMs);
    if (failed) throw failed;
    if (out.code !== 0) {
      if (noRoute(out)) throw new PathToolError('traceroute', 'no_route', `this server has no route to ${req.address}`);
      throw new PathToolError('traceroute', 'failed', complaint(out));
    }
    return { hops, unfinished: null };
  }

  async mtr(req: MtrRequest, opts: RunOptions): Promise<MtrRun> {
    const deadlineMs = this.#deadlines.mtr;
    const out = await runProcess({
      file: await this.#program('mtr'),
      args: mtrArgs(req),
      deadlineMs,
      signal: opts.signal,
      spawn: this.#spawn,
      collectStdout: true,
    });
    const failed = failure('mtr', out, deadlineMs);
    if (failed) throw failed;
    if (out.code !== 0) {
      if (noRoute(out)) throw new PathToolError('mtr', 'no_route', `this server has no route to ${req.address}`);
      throw new PathToolError('mtr', 'failed', complaint(out));
    }
    return { hops: parseMtrJson(out.stdout) };
  }

  async #program(tool: PathToolName): Promise<string> {
    const known = this.#found[tool] ?? this.#programs[tool];
    if (known !== undefined) return known;
    const found = await this.#locate(tool);
    if (found === null) throw new PathToolError(tool, 'failed', 'is not installed');
    return found;
  }

  async #locate(tool: PathToolName): Promise<string | null> {
    const candidates = this.#programs[tool] !== undefined ? [this.#programs[tool]] : DEFAULT_PATHS[tool];
    for (const path of candidates) {
      try {
        await access(path, constants.X_OK);
        return path;
      } catch {
        // The next place.
      }
    }
    return null;
  }

  async #check(): Promise<PathToolsAvailability> {
    const [ping, traceroute, mtr] = await Promise.all([this.#checkPing(), this.#checkTraceroute(), this.#checkMtr()]);
    return { ping, traceroute, mtr };
  }

  /** The program, when it exists and is the one the parsers read; else why not. */
  async #present(tool: PathToolName): Promise<{ program: string } | { reason: string }> {
    const program = await this.#locate(tool);
    if (program === null) {
      const where = this.#programs[tool] ?? DEFAULT_PATHS[tool].join(', ');
      return { reason: `${tool} is not installed: no executable at ${where} (install the Debian package ${PACKAGES[tool]})` };
    }
    const v = VERSIONS[tool];
    const out = await runProcess({ file: program, args: [v.flag], deadlineMs: SELF_TEST_DEADLINE_MS, spawn: this.#spawn, collectStdout: true });
    if (out.startError) return { reason: `${program} cannot be started: ${out.startError.code ?? out.startError.message}` };
    if (!`${out.stdout}\n${out.stderr}`.includes(v.says)) return { reason: `${program} is not ${v.is}, whose output netdiag reads` };
    this.#found[tool] = program;
    return { program };
  }

  /** One probe to 127.0.0.1 with the run's own arguments: null when it went, else what the program said. */
  async #selfTest(tool: PathToolName, program: string, args: string[]): Promise<string | null> {
    const out = await runProcess({ file: program, args, deadlineMs: SELF_TEST_DEADLINE_MS, spawn: this.#spawn });
    if (out.startError === null && out.killed === null && out.code === 0) return null;
    return failure(tool, out, SELF_TEST_DEADLINE_MS)?.reason ?? complaint(out);
  }

  async #checkPing(): Promise<ToolAvailability> {
    const present = await this.#present('ping');
    if ('reason' in present) return { available: false, reason: present.reason };
    const said = await this.#selfTest('ping', present.program, pingArgs({ address: LOOPBACK, family: 4, packets: 1 }));
    if (said === null) return { available: true, reason: null };
    return { available: false, reason: `ping may not send ICMP echo requests (${said}): ${privilegeHint('ping', await realpath(present.program).catch(() => present.program))}` };
  }

  async #checkTraceroute(): Promise<TracerouteAvailability> {
    const present = await this.#present('traceroute');
    if ('reason' in present) return { available: false, reason: present.reason, protocols: [] };
    const trial = (protocol: PathProtocol) =>
      this.#selfTest('traceroute', present.program, tracerouteArgs({ address: LOOPBACK, family: 4, protocol, port: 33_434, maxHops: 1, queries: 1 }));
    // icmp and tcp both need a raw socket; udp needs none.
    const [raw, udp] = await Promise.all([trial('icmp'), trial('udp')]);
    const protocols: PathProtocol[] = [...(raw === null ? (['icmp', 'tcp'] as const) : []), ...(udp === null ? (['udp'] as const) : [])];
    if (raw === null && udp === null) return { available: true, reason: null, protocols: ['icmp', 'udp', 'tcp'] };
    const program = await realpath(present.program).catch(() => present.program);
    const reason =
      raw !== null && udp !== null
        ? `traceroute cannot probe at all (${udp})`
        : raw !== null
          ? `traceroute may not open raw sockets, which icmp and tcp probes need (${raw}): ${privilegeHint('traceroute', program)}; udp probes work`
          : `traceroute cannot send udp probes (${udp})`;
    return { available: false, reason, protocols };
  }

  async #checkMtr(): Promise<ToolAvailability> {
    const present = await this.#present('mtr');
    if ('reason' in present) return { available: false, reason: present.reason };
    const said = await this.#selfTest('mtr', present.program, mtrArgs({ address: LOOPBACK, family: 4, protocol: 'icmp', port: 33_434, maxHops: 1, packets: 1 }));
    if (said === null) return { available: true, reason: null };
    return { available: false, reason: `mtr cannot probe (${said}): ${privilegeHint('mtr', present.program)}` };
  }
}
