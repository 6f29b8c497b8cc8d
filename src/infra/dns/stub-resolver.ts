import { randomInt } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import dnsPacket, { type DecodedPacket, type Packet, type Question } from 'dns-packet';
import { DnsCache } from './cache.js';
import { DNS_ATTEMPTS, DNS_ATTEMPT_TIMEOUT_MS, DNS_EDNS_UDP_PAYLOAD, DNS_MAX_ATTEMPTS, DNS_MAX_ATTEMPT_TIMEOUT_MS, DNS_MAX_RECORDS } from './defaults.js';
import { DNS_MAX_LABEL_LENGTH, DNS_MAX_NAME_LENGTH } from '../../net/bounds.js';
import { recordsCut } from './decode.js';
import { toDnsRecord, wireType } from './records.js';
import { exchangeTcp, exchangeUdp, formatServer, rcodeOf } from './transport.js';
import type {
  DnsAnswer,
  DnsClient,
  DnsQueryOptions,
  DnsRecord,
  DnsRecordType,
  DnsServer,
  DnsStatus,
} from '../../domain/dns/client.js';
import { round2 } from '../../lib/round.js';
import { DnsTransportError } from '../../errors.js';

export interface StubResolverOptions {
  /** Recursive resolvers to ask, in order (Config.dnsServers). */
  servers: readonly DnsServer[];
  timeoutMs?: number;
  attempts?: number;
  /** null: no cache at all. Default: a DnsCache with the defaults. */
  cache?: DnsCache | null;
}

/** Answers worth asking the next server about, the way stub resolvers (glibc, musl) fail over. */
const FAILOVER_RCODES = new Set(['SERVFAIL', 'REFUSED', 'NOTIMP', 'FORMERR']);
/** No response at all from the server asked: the next one is tried, and any response code beats these. */
const NO_RESPONSE: ReadonlySet<string> = new Set<DnsStatus>(['TIMEOUT', 'UNREACHABLE']);

function checkName(name: string): string {
  const n = name.trim().replace(/\.$/, '').toLowerCase();
  // Domain code validates user input; this only stops a caller's bug from reaching the wire.
  if (n.length === 0 || n.length > DNS_MAX_NAME_LENGTH || n.split('.').some((l) => l.length === 0 || l.length > DNS_MAX_LABEL_LENGTH)) {
    throw new RangeError(`DNS name ${JSON.stringify(name)} is not a valid query name`);
  }
  return n;
}

/**
 * A stub resolver speaking real DNS to the configured recursive resolvers: UDP first, TCP when
 * the answer is truncated, one retry on the next server when a server times out, fails or
 * answers SERVFAIL/REFUSED. Answers are matched by random id and question; anything else on the
 * socket is ignored.
 */
export class StubResolver implements DnsClient {
  readonly #servers: readonly DnsServer[];
  readonly #timeoutMs: number;
  readonly #attempts: number;
  readonly #cache: DnsCache | null;
  /** Identical queries already on the wire share one exchange (bulk and IP lookups repeat names). */
  readonly #inFlight = new Map<string, Promise<DnsAnswer>>();

  constructor(opts: StubResolverOptions) {
    if (opts.servers.length === 0) throw new RangeError('StubResolver needs at least one DNS server');
    this.#servers = [...opts.servers];
    this.#timeoutMs = checkTimeout(opts.timeoutMs ?? DNS_ATTEMPT_TIMEOUT_MS);
    this.#attempts = checkAttempts(opts.attempts ?? DNS_ATTEMPTS);
    this.#cache = opts.cache === undefined ? new DnsCache() : opts.cache;
  }

  async query<T extends DnsRecordType>(
    name: string,
    type: T,
    opts: DnsQueryOptions = {},
  ): Promise<DnsAnswer<T>> {
    const started = performance.now();
    const qname = checkName(name);
    const servers = opts.servers && opts.servers.length > 0 ? opts.servers : this.#servers;
    const timeoutMs = checkTimeout(opts.timeoutMs ?? this.#timeoutMs);
    const attempts = checkAttempts(opts.attempts ?? this.#attempts);
    const useCache = opts.cache !== false && this.#cache !== null;
    const dnssec = opts.dnssec === true;
    // The DO bit changes the answer (RRSIGs, the AD bit): asked with and without, two entries.
    const cacheKey = DnsCache.key(qname, dnssec ? `${type}+do` : type, servers.map(formatServer).join(','));

    if (useCache) {
      const hit = this.#cache!.get(cacheKey);
      if (hit) {
        return narrow<T>({ ...hit, transport: 'cache', cached: true, responseTimeMs: round2(performance.now() - started) });
      }
    }

    const flightKey = `${cacheKey}|${timeoutMs}|${attempts}|${useCache}`;
    let flight = this.#inFlight.get(flightKey);
    if (flight === undefined) {
      flight = this.#resolve(qname, type, dnssec, servers, timeoutMs, attempts, useCache ? cacheKey : null).finally(() =>
        this.#inFlight.delete(flightKey),
      );
      this.#inFlight.set(flightKey, flight);
    }
    const answer = await flight;
    return narrow<T>({ ...answer, responseTimeMs: round2(performance.now() - started) });
  }

  async #resolve(
    name: string,
    type: DnsRecordType,
    dnssec: boolean,
    servers: readonly DnsServer[],
    timeoutMs: number,
    attempts: number,
    cacheKey: string | null,
  ): Promise<DnsAnswer> {
    const started = performance.now();
    let best: DnsAnswer | null = null;
    for (let attempt = 0; attempt < attempts; attempt++) {
      const server = servers[attempt % servers.length]!;
      let answer: DnsAnswer;
      try {
        const { packet, transport } = await this.#exchange(server, name, type, dnssec, timeoutMs);
        answer = toAnswer(packet, name, type, server, transport);
        if (cacheKey !== null && this.#cache !== null) {
          const lifetime = cacheLifetimeS(packet, answer);
          if (lifetime > 0) this.#cache.set(cacheKey, answer, lifetime);
        }
      } catch (err) {
        if (!(err instanceof DnsTransportError)) throw err;
        answer = {
          name,
          type,
          status: err.reason === 'unreachable' ? 'UNREACHABLE' : 'TIMEOUT',
          records: [],
          resolver: formatServer(server),
          responseTimeMs: 0,
          transport: 'udp',
          cached: false,
          error: err.message,
          authenticated: false,
        };
      }
      // A real response code beats a timeout (or an unreachable server) when the retry does not do better.
      if (best === null || NO_RESPONSE.has(best.status) || !NO_RESPONSE.has(answer.status)) best = answer;
      if (!NO_RESPONSE.has(answer.status) && !FAILOVER_RCODES.has(answer.status)) break;
    }
    return { ...best!, responseTimeMs: round2(performance.now() - started) };
  }

  /** UDP, then TCP to the same server if the answer came back truncated; both inside one timeout. */
  async #exchange(
    server: DnsServer,
    name: string,
    type: DnsRecordType,
    dnssec: boolean,
    timeoutMs: number,
  ): Promise<{ packet: DecodedPacket; transport: 'udp' | 'tcp' }> {
    const deadline = performance.now() + timeoutMs;
    const qtype = wireType(type);
    const id = randomInt(0, 65536);
    const udp = await exchangeUdp(server, queryMessage(id, name, qtype, dnssec, 'udp'), { id, name, type: qtype }, timeoutMs);
    if (!udp.flag_tc) return { packet: udp, transport: 'udp' };

    const remaining = Math.max(1, Math.round(deadline - performance.now()));
    const tcpId = randomInt(0, 65536);
    const tcp = await exchangeTcp(server, queryMessage(tcpId, name, qtype, dnssec, 'tcp'), { id: tcpId, name, type: qtype }, remaining);
    return { packet: tcp, transport: 'tcp' };
  }
}

/**
 * One query. Over UDP with EDNS(0), so answers up to DNS_EDNS_UDP_PAYLOAD bytes need no TCP
 * retry; over TCP without it unless the DO bit must be sent (RFC 3225 puts it in the OPT record).
 */
function queryMessage(id: number, name: string, qtype: string, dnssec: boolean, transport: 'udp' | 'tcp'): Buffer {
  const packet: Packet = {
    type: 'query',
    id,
    flags: dnsPacket.RECURSION_DESIRED,
    questions: [{ type: qtype as Question['type'], name, class: 'IN' }],
  };
  if (transport === 'udp' || dnssec) {
    packet.additionals = [
      {
        type: 'OPT',
        name: '.',
        udpPayloadSize: DNS_EDNS_UDP_PAYLOAD,
        extendedRcode: 0,
        ednsVersion: 0,
        // dns-packet writes `flags` and ignores `flag_do`.
        flags: dnssec ? dnsPacket.DNSSEC_OK : 0,
        flag_do: dnssec,
        options: [],
      },
    ];
  }
  return transport === 'udp' ? dnsPacket.encode(packet) : dnsPacket.streamEncode(packet);
}

function checkTimeout(ms: number): number {
  if (!Number.isFinite(ms) || ms <= 0 || ms > DNS_MAX_ATTEMPT_TIMEOUT_MS) {
    throw new RangeError(`DNS timeout must be between 1 and ${DNS_MAX_ATTEMPT_TIMEOUT_MS} ms, got ${ms}`);
  }
  return ms;
}

function checkAttempts(n: number): number {
  if (!Number.isInteger(n) || n < 1 || n > DNS_MAX_ATTEMPTS) throw new RangeError(`DNS attempts must be 1-${DNS_MAX_ATTEMPTS}, got ${n}`);
  return n;
}

/** A name from a message as names are compared here: lowercase, without the trailing dot. */
function plainName(name: string): string {
  const lower = name.toLowerCase();
  return lower.endsWith('.') ? lower.slice(0, -1) : lower;
}

/** toAnswer keeps only records of the asked type, so the narrowing holds. */
function narrow<T extends DnsRecordType>(answer: DnsAnswer): DnsAnswer<T> {
  return answer as unknown as DnsAnswer<T>;
}

function toAnswer(
  packet: DecodedPacket,
  name: string,
  type: DnsRecordType,
  server: DnsServer,
  transport: 'udp' | 'tcp',
): DnsAnswer {
  const records: DnsRecord[] = [];
  const aliases = new Set<string>();
  const cut = recordsCut(packet);
  for (const a of packet.answers ?? []) {
    const record = toDnsRecord(a, type);
    if (record !== null) records.push(record);
    const recordName = plainName(a.name);
    if (recordName !== name) aliases.add(recordName);
    if (a.type === 'CNAME' && typeof a.data === 'string') aliases.add(plainName(a.data));
  }
  aliases.delete(name);
  return {
    name,
    type,
    status: rcodeOf(packet) as DnsStatus,
    records,
    ...(aliases.size > 0 ? { aliases: [...aliases] } : {}),
    resolver: formatServer(server),
    responseTimeMs: 0,
    transport,
    cached: false,
    error: cut > 0 ? `the answer held ${cut} records more than the ${DNS_MAX_RECORDS} read` : null,
    authenticated: packet.flag_ad === true,
  };
}

/**
 * How long an answer may be cached, in seconds: the smallest TTL of the answer section (the CNAME
 * chain included) when there are records; for NXDOMAIN and no-data answers the negative TTL of
 * RFC 2308, min(SOA TTL, SOA minimum) from the authority section, and nothing without a SOA.
 * Failures (SERVFAIL, REFUSED, ...) are not cached. The cache applies its caps.
 */
export function cacheLifetimeS(packet: DecodedPacket, answer: DnsAnswer): number {
  if (answer.status !== 'NOERROR' && answer.status !== 'NXDOMAIN') return 0;
  if (answer.status === 'NOERROR' && answer.records.length > 0) {
    const ttls = (packet.answers ?? []).flatMap((a) => (a.type === 'OPT' ? [] : [a.ttl ?? 0]));
    return ttls.length > 0 ? Math.min(...ttls) : 0;
  }
  for (const a of packet.authorities ?? []) {
    if (a.type === 'SOA') return Math.min(a.ttl ?? 0, a.data.minimum ?? 0);
  }
  return 0;
}

/** The DNS client for the configured resolvers, with its cache. */
export function createDnsClient(config: { dnsServers: readonly DnsServer[] }, opts: Omit<StubResolverOptions, 'servers'> = {}): StubResolver {
  return new StubResolver({ servers: config.dnsServers, ...opts });
}
