import { Type, type TProperties } from 'typebox';
import { MAX_PROXY_INPUT_LENGTH, SPEED_MIN_TIMED_MS, TOO_FAST_TO_MEASURE, type ProxyCheckResult as DomainProxyCheckResult } from '../../domain/proxy/index.js';
import { Nullable } from '../shared/schema.js';
import type { Assert, Describes } from '../shared/shape.js';

export const PROXY_FORMS = 'host:port, host:port:user:pass, user:pass@host:port or http|https|socks4|socks5://[user:pass@]host:port (IPv6 hosts in brackets)';
const ProxyInput = Type.String({ minLength: 1, maxLength: MAX_PROXY_INPUT_LENGTH, description: PROXY_FORMS });

/** What to check, which a bulk call takes too. */
export const proxyFlags = {
  check_ssl: Type.Optional(Type.Boolean({ default: true, description: 'TLS handshake with NETDIAG_SSL_CHECK_TARGET through the proxy; false omits ssl_support' })),
  check_anonymity: Type.Optional(Type.Boolean({ default: true, description: 'judge anonymity; false omits anonymity_level' })),
  check_speed: Type.Optional(Type.Boolean({ default: true, description: 'measure download, upload and latency; false omits speed' })),
  check_location: Type.Optional(Type.Boolean({ default: true, description: 'locate the exit address; false omits location' })),
};

export const ProxyCheckBody = Type.Object({ proxy: ProxyInput, ...proxyFlags });

const Protocol = Type.Enum(['http', 'https', 'socks4', 'socks5']);
const StepStatus = Type.Enum(['ok', 'failed', 'timeout']);
const Step = {
  status: StepStatus,
  error: Nullable(Type.String()),
  time: Type.Number({ description: 'ms' }),
};

const ProxyLocation = Type.Object({
  country: Nullable(Type.String()),
  country_code: Nullable(Type.String()),
  city: Nullable(Type.String()),
  region: Nullable(Type.String()),
  isp: Nullable(Type.String()),
});

const ProxySpeed = Type.Object({
  download: Nullable(Type.String({ description: `"<number> Mbps", or "${TOO_FAST_TO_MEASURE}" when the transfer took under ${SPEED_MIN_TIMED_MS} ms (too short to time honestly); null when it did not finish` })),
  upload: Nullable(Type.String({ description: `"<number> Mbps" (the bytes the judge counted over the time they took), or "${TOO_FAST_TO_MEASURE}" when that took under ${SPEED_MIN_TIMED_MS} ms; null when it did not finish` })),
  latency: Nullable(Type.String({ description: '"<number>ms": time to first byte through the open tunnel' })),
});

/** The fields of a check's result, which a bulk item has too. */
export const proxyResultFields = {
  proxy: Type.String({ description: 'the input as given' }),
  status: Type.Enum(['working', 'failed', 'timeout']),
  protocol: Nullable(Protocol),
  response_time: Nullable(Type.Number({ description: 'ms to connect through the proxy and relay a small request to the judge' })),
  anonymity_level: Type.Optional(Nullable(Type.Enum(['transparent', 'anonymous', 'elite'], { description: 'null when it could not be judged' }))),
  proxy_headers: Type.Optional(Type.Array(Type.String(), { description: 'headers that revealed a proxy or our address' })),
  ssl_support: Type.Optional(Nullable(Type.Boolean())),
  location: Type.Optional(Nullable(ProxyLocation)),
  speed: Type.Optional(Nullable(ProxySpeed)),
  exit_ip: Nullable(Type.String({ description: 'the address the judge saw the request come from' })),
  error: Nullable(Type.String()),
  checked_at: Type.String({ description: 'ISO 8601, UTC' }),
  host: Type.String(),
  port: Type.Integer(),
  checks: Type.Object({
    protocol: Type.Object({ ...Step, tried: Type.Array(Protocol) }),
    anonymity: Type.Optional(Type.Object(Step)),
    ssl: Type.Optional(Type.Object(Step)),
    speed: Type.Optional(Type.Object(Step)),
  }),
} satisfies TProperties;

export const ProxyCheckResult = Type.Object(proxyResultFields);
type _Described = Assert<Describes<typeof ProxyCheckResult, DomainProxyCheckResult>>;
