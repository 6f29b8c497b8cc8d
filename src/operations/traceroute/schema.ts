import { Type } from 'typebox';
import {
  PATH_DEFAULT_MAX_HOPS,
  PATH_DEFAULT_PROTOCOL,
  PATH_DEFAULT_TCP_PORT,
  PATH_DEFAULT_UDP_PORT,
  PATH_MAX_MAX_HOPS,
  PATH_MIN_MAX_HOPS,
  PATH_PROTOCOLS,
  TRACEROUTE_DEFAULT_QUERIES,
  TRACEROUTE_MAX_QUERIES,
  TRACEROUTE_MIN_QUERIES,
  type TracerouteResult as DomainTracerouteResult,
} from '../../domain/path/index.js';
import { MAX_PORT, MIN_PORT } from '../../net/bounds.js';
import { Nullable } from '../shared/schema.js';
import type { Assert, Describes } from '../shared/shape.js';
import { IpVersion, PathTarget } from '../ping/schema.js';

/** One of PATH_PROTOCOLS (the domain's list), with `options`. */
const protocolOf = (options: { description: string; default?: string }) => Type.Enum([...PATH_PROTOCOLS], options);

export const PathProtocol = protocolOf({ description: 'what the probes were' });

export const pathProtocolField = Type.Optional(protocolOf({ default: PATH_DEFAULT_PROTOCOL, description: 'what to probe with: icmp echo, udp datagrams or tcp SYNs' }));
export const pathPortField = Type.Optional(
  Type.Integer({ minimum: MIN_PORT, maximum: MAX_PORT, description: `destination port of udp and tcp probes; default ${PATH_DEFAULT_UDP_PORT} (udp) or ${PATH_DEFAULT_TCP_PORT} (tcp)` }),
);
export const maxHopsField = Type.Optional(Type.Integer({ minimum: PATH_MIN_MAX_HOPS, maximum: PATH_MAX_MAX_HOPS, default: PATH_DEFAULT_MAX_HOPS, description: 'the highest TTL probed' }));

export const TracerouteBody = Type.Object({
  target: PathTarget,
  protocol: pathProtocolField,
  port: pathPortField,
  max_hops: maxHopsField,
  queries: Type.Optional(Type.Integer({ minimum: TRACEROUTE_MIN_QUERIES, maximum: TRACEROUTE_MAX_QUERIES, default: TRACEROUTE_DEFAULT_QUERIES, description: 'probes per TTL' })),
  ip_version: IpVersion,
});

/** Who answered at one TTL: reported, never contacted. */
export const hopIdentity = {
  ttl: Type.Integer({ description: 'the hop: the TTL (IPv6: hop limit) its probes were sent with' }),
  address: Nullable(Type.String({ description: 'who answered; null when nobody did' })),
  hostname: Nullable(Type.String({ description: "its PTR name through netdiag's resolver (at most 1 s); null when none" })),
  asn: Nullable(Type.Integer({ description: 'its AS number from the local GeoIP ASN data; null when unknown or private' })),
  organization: Nullable(Type.String({ description: "that AS's organisation name; null when unknown" })),
  network: Nullable(Type.String({ description: 'the announced prefix (CIDR) holding the address; null when unknown' })),
};

export const TracerouteHop = Type.Object({
  ...hopIdentity,
  rtts: Type.Array(Nullable(Type.Number()), { description: 'one per probe, in order: its round-trip time in ms, or null when it went unanswered' }),
});

export const TracerouteResult = Type.Object({
  target: Type.String({ description: 'the target as asked' }),
  address: Nullable(Type.String({ description: 'the checked address probed; null when the target did not resolve' })),
  protocol: PathProtocol,
  reached: Type.Boolean({ description: 'the target itself answered a probe' }),
  hops: Type.Array(TracerouteHop, { description: 'one per TTL from 1, up to the target, an unreachable answer or max_hops' }),
  error: Nullable(Type.String({ description: 'why nothing was measured (no address, no route) or why the trace stopped early; else null' })),
});
type _Described = Assert<Describes<typeof TracerouteResult, DomainTracerouteResult>>;
