import type { Dialer } from '../../domain/dialer.js';
import type { ReversePolicy } from '../../domain/dns/lookup.js';
import type { GeoReader } from '../../domain/ip/geoip.js';
import type { DnsQuerier } from '../../domain/ip/types.js';
import { PATH_MAX_PER_OWNER_PROCESSES, PATH_MAX_PROCESSES, PATH_RESERVED_BELOW_PROCESSES } from '../../domain/path/defaults.js';
import { PathTools } from '../../domain/path/service.js';
import { SocketBudget } from '../../domain/socket-budget.js';
import { PathRunner, type PathRunnerOptions } from './runner.js';

/** The path tools' runner (docs/path-tools.md): the programs, their arguments and output, and what runs here. */
export { PathRunner, type PathRunnerOptions } from './runner.js';
export { runProcess, LineSplitter, type ProcessOutcome, type ProcessSpec, type SpawnFn } from './process.js';
export { mtrArgs, pingArgs, tracerouteArgs } from './args.js';

export interface PathToolsFactoryDeps {
  /** The one dialer: its resolve is the target policy's check; its policy decides which hops' PTR may be asked. */
  dialer: Pick<Dialer, 'resolve'> & { policy?: ReversePolicy };
  /** netdiag's own resolver (the DNS client /ip/lookup uses), for the hops' PTR. */
  dns?: DnsQuerier | null;
  /** The local GeoIP reader, for the hops' AS. */
  geo?: Pick<GeoReader, 'asn'> | null;
  runner?: PathRunnerOptions;
  /** The one process budget of this server: processes at once, and the most one account may run. */
  maxProcesses?: number;
  maxPerOwnerProcesses?: number;
}

/**
 * The path tools as compose.ts builds them once per server (one process budget, one availability
 * report): `createPathTools({ dialer, dns: dnsClient, geo })`.
 */
export function createPathTools(deps: PathToolsFactoryDeps): PathTools {
  const capacity = deps.maxProcesses ?? PATH_MAX_PROCESSES;
  const processes = new SocketBudget(capacity, {
    maxPerOwner: Math.min(capacity, deps.maxPerOwnerProcesses ?? PATH_MAX_PER_OWNER_PROCESSES),
    reservedBelow: PATH_RESERVED_BELOW_PROCESSES,
  });
  return new PathTools({
    dialer: deps.dialer,
    runner: new PathRunner(deps.runner),
    processes,
    dns: deps.dns ?? null,
    geo: deps.geo ?? null,
    policy: deps.dialer.policy,
  });
}
