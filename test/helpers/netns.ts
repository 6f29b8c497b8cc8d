import { execFile, spawn, spawnSync, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { existsSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { eventually } from './eventually.js';

/**
 * A real routed network of four network namespaces, for the path tools' tests:
 *
 *   client --veth-- r1 --veth-- r2 --veth-- target
 *   10.200.1.2    .1.1 | .2.1   .2.2 | .3.1   10.200.3.2
 *   fd00:200:1::2  ::1 | 2::1   2::2 | 3::1   fd00:200:3::2
 *
 * From the client a path has three hops: r1 (10.200.1.1), r2 (10.200.2.2), the target. The
 * routers forward, nobody rate-limits its ICMP errors (so every probe is answered, and a count is
 * exact), and no namespace has a link to the machine's own network: nothing sent in it leaves.
 * Names are unique per lab (`ndpt-<pid>-<random>-<node>`); `destroy` removes them, and a lab
 * made later removes those of a test process that died before it could.
 */

export type LabNode = 'client' | 'r1' | 'r2' | 'target';
export type Router = 'r1' | 'r2';

/** The address of each node as the client sees it on the path (a router's: the side facing the client). */
export const LAB_V4 = { client: '10.200.1.2', r1: '10.200.1.1', r2: '10.200.2.2', target: '10.200.3.2' } as const;
export const LAB_V6 = { client: 'fd00:200:1::2', r1: 'fd00:200:1::1', r2: 'fd00:200:2::2', target: 'fd00:200:3::2' } as const;

const PREFIX = 'ndpt-';
const NODES: readonly LabNode[] = ['client', 'r1', 'r2', 'target'];

function which(names: readonly string[]): string | null {
  return names.find((p) => existsSync(p)) ?? null;
}

const IP = which(['/usr/sbin/ip', '/sbin/ip', '/usr/bin/ip', '/bin/ip']);
const IPTABLES = which(['/usr/sbin/iptables', '/sbin/iptables']);
const IP6TABLES = which(['/usr/sbin/ip6tables', '/sbin/ip6tables']);

export interface Output {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(file: string, args: readonly string[]): Promise<Output> {
  return new Promise((resolve) => {
    execFile(file, args, { encoding: 'utf8', maxBuffer: 4 << 20 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? ((err as { code: number }).code) : null) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

async function must(file: string, args: readonly string[]): Promise<string> {
  const out = await run(file, args);
  if (out.code !== 0) throw new Error(`${file} ${args.join(' ')}: exit ${out.code}: ${out.stderr.trim()}`);
  return out.stdout;
}

let labReason: string | null | undefined;

/** Why labs cannot be built here (not root, no `ip netns`), or null when they can. */
export function labUnavailable(): string | null {
  if (labReason !== undefined) return labReason;
  if (process.getuid?.() !== 0) labReason = 'needs root: network namespaces and raw sockets';
  else if (IP === null) labReason = 'needs ip (iproute2) to build network namespaces';
  else {
    const name = `${PREFIX}probe-${process.pid}`;
    const add = spawnSync(IP, ['netns', 'add', name], { encoding: 'utf8' });
    if (add.status === 0) spawnSync(IP, ['netns', 'del', name]);
    labReason = add.status === 0 ? null : `ip netns is unavailable here: ${add.stderr.trim() || `exit ${add.status}`}`;
  }
  return labReason;
}

/** Why a lab's firewall options (silenced routers, dropped echoes, rejects) are unavailable, or null. */
export function firewallUnavailable(): string | null {
  return IPTABLES && IP6TABLES ? null : 'needs iptables and ip6tables in the namespaces (silenced routers, dropped echoes)';
}

/** Removes the namespaces of labs whose test process is gone (it died before its t.after). */
async function sweep(): Promise<void> {
  const list = await run(IP!, ['netns', 'list']);
  for (const line of list.stdout.split('\n')) {
    const name = line.split(' ')[0] ?? '';
    if (!name.startsWith(PREFIX)) continue;
    const pid = Number(name.slice(PREFIX.length).split('-')[0]);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      process.kill(pid, 0);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ESRCH') await run(IP!, ['netns', 'del', name]);
    }
  }
}

/** What the runner spawns with (the seam of src/infra/path/process.ts). */
export type SpawnFn = (file: string, args: readonly string[], options: SpawnOptions) => ChildProcess;

export class Lab {
  /** Each node's namespace name. */
  readonly ns: Readonly<Record<LabNode, string>>;
  #destroyed = false;

  constructor(id: string) {
    this.ns = Object.fromEntries(NODES.map((n) => [n, `${PREFIX}${process.pid}-${id}-${n}`])) as Record<LabNode, string>;
  }

  /** Runs a program inside a node's namespace. */
  exec(node: LabNode, file: string, args: readonly string[]): Promise<Output> {
    return run(IP!, ['netns', 'exec', this.ns[node], file, ...args]);
  }

  /** Spawns as child_process.spawn does, inside a node's namespace (`ip netns exec` execs the program: same pid). */
  spawnIn(node: LabNode): SpawnFn {
    return (file, args, options) => spawn(IP!, ['netns', 'exec', this.ns[node], file, ...args], options);
  }

  async #firewall(node: LabNode, v4: readonly string[], v6: readonly string[]): Promise<void> {
    if (firewallUnavailable()) throw new Error(firewallUnavailable()!);
    await must(IP!, ['netns', 'exec', this.ns[node], IPTABLES!, ...v4]);
    await must(IP!, ['netns', 'exec', this.ns[node], IP6TABLES!, ...v6]);
  }

  /** The router sends no "time exceeded": a hop nobody answers for. */
  silence(router: Router): Promise<void> {
    return this.#firewall(
      router,
      ['-A', 'OUTPUT', '-p', 'icmp', '--icmp-type', 'time-exceeded', '-j', 'DROP'],
      ['-A', 'OUTPUT', '-p', 'icmpv6', '--icmpv6-type', 'time-exceeded', '-j', 'DROP'],
    );
  }

  /** The router drops every second echo request it forwards (the 1st, 3rd, ... pass). */
  dropEverySecondEcho(router: Router): Promise<void> {
    const nth = ['-m', 'statistic', '--mode', 'nth', '--every', '2', '--packet', '1', '-j', 'DROP'];
    return this.#firewall(
      router,
      ['-A', 'FORWARD', '-p', 'icmp', '--icmp-type', 'echo-request', ...nth],
      ['-A', 'FORWARD', '-p', 'icmpv6', '--icmpv6-type', 'echo-request', ...nth],
    );
  }

  /** r2 refuses to forward to the target, answering host (`!H`), network (`!N`) or administratively prohibited (`!X`). */
  reject(kind: 'host' | 'net' | 'admin'): Promise<void> {
    const v4 = { host: 'icmp-host-unreachable', net: 'icmp-net-unreachable', admin: 'icmp-admin-prohibited' }[kind];
    const v6 = { host: 'icmp6-addr-unreachable', net: 'icmp6-no-route', admin: 'icmp6-adm-prohibited' }[kind];
    return this.#firewall(
      'r2',
      ['-A', 'FORWARD', '-d', LAB_V4.target, '-j', 'REJECT', '--reject-with', v4],
      ['-A', 'FORWARD', '-d', LAB_V6.target, '-j', 'REJECT', '--reject-with', v6],
    );
  }

  /** r2 sends the target a copy of every echo request: each is answered twice, ping's `(DUP!)`. */
  duplicateEchoes(): Promise<void> {
    return this.#firewall(
      'r2',
      ['-t', 'mangle', '-A', 'PREROUTING', '-p', 'icmp', '--icmp-type', 'echo-request', '-d', LAB_V4.target, '-j', 'TEE', '--gateway', LAB_V4.target],
      ['-t', 'mangle', '-A', 'PREROUTING', '-p', 'icmpv6', '--icmpv6-type', 'echo-request', '-d', LAB_V6.target, '-j', 'TEE', '--gateway', LAB_V6.target],
    );
  }

  /** The target answers nothing at all. */
  silenceTarget(): Promise<void> {
    return this.#firewall('target', ['-A', 'INPUT', '-j', 'DROP'], ['-A', 'INPUT', '-j', 'DROP']);
  }

  /** Takes every firewall rule away again (filter and mangle, IPv4 and IPv6, every node). */
  async reset(): Promise<void> {
    if (firewallUnavailable()) return;
    for (const node of NODES) {
      for (const tool of [IPTABLES!, IP6TABLES!]) {
        for (const table of ['filter', 'mangle']) await must(IP!, ['netns', 'exec', this.ns[node], tool, '-t', table, '-F']);
      }
    }
  }

  /** Removes every namespace of the lab (and with them their links); safe to call twice. */
  async destroy(): Promise<void> {
    if (this.#destroyed) return;
    this.#destroyed = true;
    for (const name of Object.values(this.ns)) await run(IP!, ['netns', 'del', name]);
  }
}

/**
 * Builds a lab: four namespaces, three veth pairs, addresses, routes, forwarding. Throws when it
 * cannot (check labUnavailable() first and skip with its reason). Call `destroy` in t.after.
 */
export async function createLab(): Promise<Lab> {
  const reason = labUnavailable();
  if (reason) throw new Error(reason);
  await sweep();
  const lab = new Lab(randomBytes(3).toString('hex'));
  const ns = lab.ns;
  const ip = (node: LabNode, ...args: string[]) => must(IP!, ['-n', ns[node], ...args]);
  const sysctl = (node: LabNode, ...settings: string[]) => must(IP!, ['netns', 'exec', ns[node], 'sysctl', '-q', '-w', ...settings]);
  try {
    for (const node of NODES) {
      await must(IP!, ['netns', 'add', ns[node]]);
      // Before any link exists, so that every link is made with them: no duplicate address
      // detection (an address is usable at once), no rate limit on ICMP errors.
      await sysctl(
        node,
        'net.ipv6.conf.all.accept_dad=0',
        'net.ipv6.conf.default.accept_dad=0',
        'net.ipv4.icmp_ratelimit=0',
        'net.ipv6.icmp.ratelimit=0',
        ...(node === 'r1' || node === 'r2' ? ['net.ipv4.ip_forward=1', 'net.ipv6.conf.all.forwarding=1'] : []),
      );
      await ip(node, 'link', 'set', 'lo', 'up');
    }
    // Each pair is made inside one namespace with its peer in the next: no name in the machine's own.
    const links: Array<[LabNode, string, LabNode, string]> = [
      ['client', 'v0', 'r1', 'v1'],
      ['r1', 'v2', 'r2', 'v3'],
      ['r2', 'v4', 'target', 'v5'],
    ];
    for (const [a, ia, b, ib] of links) await ip(a, 'link', 'add', ia, 'type', 'veth', 'peer', 'name', ib, 'netns', ns[b]);
    const addresses: Array<[LabNode, string, string, string]> = [
      ['client', 'v0', '10.200.1.2/24', 'fd00:200:1::2/64'],
      ['r1', 'v1', '10.200.1.1/24', 'fd00:200:1::1/64'],
      ['r1', 'v2', '10.200.2.1/24', 'fd00:200:2::1/64'],
      ['r2', 'v3', '10.200.2.2/24', 'fd00:200:2::2/64'],
      ['r2', 'v4', '10.200.3.1/24', 'fd00:200:3::1/64'],
      ['target', 'v5', '10.200.3.2/24', 'fd00:200:3::2/64'],
    ];
    for (const [node, dev, v4, v6] of addresses) {
      await ip(node, 'addr', 'add', v4, 'dev', dev);
      await ip(node, '-6', 'addr', 'add', v6, 'dev', dev, 'nodad');
      await ip(node, 'link', 'set', dev, 'up');
    }
    const routes: Array<[LabNode, string, string, string, string]> = [
      ['client', 'default', '10.200.1.1', 'default', 'fd00:200:1::1'],
      ['r1', 'default', '10.200.2.2', 'default', 'fd00:200:2::2'],
      ['r2', '10.200.1.0/24', '10.200.2.1', 'fd00:200:1::/64', 'fd00:200:2::1'],
      ['target', 'default', '10.200.3.1', 'default', 'fd00:200:3::1'],
    ];
    for (const [node, to4, via4, to6, via6] of routes) {
      await ip(node, 'route', 'add', to4, 'via', via4);
      await ip(node, '-6', 'route', 'add', to6, 'via', via6);
    }
    // A veth's carrier is reported up to a second late (the kernel's link watch), and IPv6 starts
    // on a link only then: its link-local address, which neighbour discovery and the routers'
    // ICMPv6 errors come from. Ready when every veth has one that is not tentative.
    const veths: Record<LabNode, number> = { client: 1, r1: 2, r2: 2, target: 1 };
    for (const node of NODES) {
      await eventually(
        async () => {
          const out = await must(IP!, ['-n', ns[node], '-6', '-o', 'addr', 'show', 'scope', 'link']);
          const lines = out.split('\n').filter((l) => l.includes('fe80::'));
          return lines.length === veths[node] && !lines.some((l) => l.includes('tentative'));
        },
        { what: `the IPv6 link-local addresses of ${ns[node]}` },
      );
    }
  } catch (err) {
    await lab.destroy();
    throw err;
  }
  return lab;
}
