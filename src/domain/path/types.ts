import type { CheckedAddress } from '../dialer.js';
import type { PATH_PROTOCOLS } from './defaults.js';

/**
 * The path tools' results, and what the service needs from the programs that measure them (the
 * runner, in the infra layer). The runner knows the programs (their arguments, their output); the
 * service knows what the results mean (the target policy, statistics, each hop's name and AS).
 */

export type PathProtocol = (typeof PATH_PROTOCOLS)[number];
export type PathToolName = 'ping' | 'traceroute' | 'mtr';

/* Results, as a call answers them (docs/path-tools.md). */

export interface PingSample {
  /** icmp_seq, from 1. */
  seq: number;
  /** The reply's TTL (IPv6: hop limit) as it arrived. */
  ttl: number;
  /** Round-trip time in ms, as ping printed it. */
  rtt: number;
}

export interface IcmpPingResult {
  /** The target as the caller wrote it (trimmed). */
  target: string;
  /** The checked address every echo went to; null when the target did not resolve (nothing was sent). */
  address: string | null;
  protocol: 'icmp';
  sent: number;
  /** Echo requests answered at least once (duplicates are not counted again). */
  received: number;
  /** (sent - received) x 100 / sent, two decimals; 100 when nothing was sent. */
  loss_percent: number;
  /** Over the first reply to each answered request, ms with three decimals (ping's own); null when none. */
  min: number | null;
  avg: number | null;
  max: number | null;
  /** ping's mdev: sqrt(mean of squares - square of mean) over the same replies. */
  mdev: number | null;
  /** One per echo request sent, in order: its first reply, or null when none came. */
  samples: Array<PingSample | null>;
  /** Why nothing was sent (the target did not resolve, no route to it), else null. */
  error: string | null;
}

/** What every hop of a traceroute or an mtr report tells of the router that answered. */
export interface HopIdentity {
  /** Hop number: the TTL (IPv6: hop limit) its probes were sent with. */
  ttl: number;
  /** Who answered; null when nobody did. Reported, never contacted. */
  address: string | null;
  /** Its PTR name through netdiag's own resolver; null when there is none, it is not asked for, or it took over 1 s. */
  hostname: string | null;
  /** Its AS number from the local GeoIP ASN data; null when unknown (or a private address). */
  asn: number | null;
  /** That AS's organisation name from the same data; null when unknown. */
  organization: string | null;
  /** The announced prefix (CIDR) that holds the address, as /ip/lookup's `asn.network`; null when unknown. */
  network: string | null;
}

export interface TracerouteHop extends HopIdentity {
  /** One per probe sent with this TTL, in order: its round-trip time in ms, or null when it went unanswered. */
  rtts: Array<number | null>;
}

export interface TracerouteResult {
  target: string;
  address: string | null;
  protocol: PathProtocol;
  /** The target itself answered one of the probes. */
  reached: boolean;
  /** One per TTL from 1, up to the target, an unreachable answer or max_hops. */
  hops: TracerouteHop[];
  error: string | null;
}

export interface MtrHop extends HopIdentity {
  sent: number;
  received: number;
  /** (sent - received) x 100 / sent, two decimals. */
  loss_percent: number;
  /** Round-trip times in ms as mtr reports them (its report's Last, Best, Avg, Wrst, StDev); null when nothing was received. */
  last: number | null;
  best: number | null;
  avg: number | null;
  worst: number | null;
  stdev: number | null;
}

export interface MtrResult {
  target: string;
  address: string | null;
  protocol: PathProtocol;
  hops: MtrHop[];
  error: string | null;
}

/* The runner: what the programs report, before the service reads it. */

/** One reply line of ping. `duplicate` replies answer a request already answered. */
export interface PingReply {
  seq: number;
  ttl: number;
  rtt: number;
  duplicate: boolean;
}

export interface PingRun {
  /** "N packets transmitted" of ping's summary; null when it printed none (killed). */
  transmitted: number | null;
  /** Every reply line, in the order printed (duplicates included). */
  replies: PingReply[];
}

/** One probe of a traceroute hop that was answered. */
export interface TraceProbe {
  address: string;
  rtt: number;
  /** traceroute's annotation after the time (`!H`, `!N`, `!X`, `!P`, `!S`, `!F-1500`, `!<n>`...), or null. */
  annotation: string | null;
}

export interface TraceHopLine {
  ttl: number;
  /** One per probe sent, in order; null for a `*`. */
  probes: Array<TraceProbe | null>;
}

export interface TracerouteRun {
  hops: TraceHopLine[];
  /** null when traceroute ended on its own; else why it was stopped early (its deadline), said in the result's `error`. */
  unfinished: string | null;
}

export interface MtrHopLine {
  ttl: number;
  /** null for mtr's `???` (nobody answered). */
  address: string | null;
  sent: number;
  received: number;
  last: number;
  best: number;
  avg: number;
  worst: number;
  stdev: number;
}

export interface MtrRun {
  hops: MtrHopLine[];
}

export interface PingRequest {
  address: CheckedAddress;
  family: 4 | 6;
  packets: number;
}

export interface TracerouteRequest {
  address: CheckedAddress;
  family: 4 | 6;
  protocol: PathProtocol;
  /** Destination port of udp and tcp probes (ignored for icmp). */
  port: number;
  maxHops: number;
  queries: number;
}

export interface MtrRequest {
  address: CheckedAddress;
  family: 4 | 6;
  protocol: PathProtocol;
  port: number;
  maxHops: number;
  packets: number;
}

export interface ToolAvailability {
  available: boolean;
  /** What is missing (the program, or the privilege) and how to provide it; null when available. */
  reason: string | null;
}

export interface TracerouteAvailability extends ToolAvailability {
  /** The protocols it can probe with here: udp needs no privilege, icmp and tcp need raw sockets. */
  protocols: PathProtocol[];
}

/** For /readyz: which path tools this server can run. */
export interface PathToolsAvailability {
  ping: ToolAvailability;
  traceroute: TracerouteAvailability;
  mtr: ToolAvailability;
}

export interface RunOptions {
  /** Kills the program (and rejects with the signal's reason) when the client goes away or the job is cancelled. */
  signal?: AbortSignal | undefined;
}

/**
 * Runs the programs with the checked address and validated numbers only. Each call rejects with
 * PathToolError when the program failed in a way that says nothing about the path, and with
 * NoRouteError when this machine has no route to the address (a diagnosis, not a fault).
 */
export interface PathToolRunner {
  availability(): Promise<PathToolsAvailability>;
  ping(req: PingRequest, opts: RunOptions & { onReply?: (reply: PingReply) => void }): Promise<PingRun>;
  traceroute(req: TracerouteRequest, opts: RunOptions & { onHop?: (hop: TraceHopLine) => void }): Promise<TracerouteRun>;
  mtr(req: MtrRequest, opts: RunOptions): Promise<MtrRun>;
}
