import { Type } from 'typebox';
import { CHECK_DEFAULT_TIMEOUT_S, CHECK_MAX_TIMEOUT_S, CHECK_MIN_TIMEOUT_S, HTTP_MAX_BODY_BYTES, HTTP_MAX_REDIRECTS, HTTP_MAX_URL_CHARS } from '../../domain/checks/defaults.js';
import type { HttpCheckResult as DomainHttpCheckResult } from '../../domain/checks/index.js';
import { Nullable } from '../shared/schema.js';
import type { Assert, Describes } from '../shared/shape.js';

/** The whole check's bound, /tls/check's too. */
export const CheckTimeout = Type.Integer({ minimum: CHECK_MIN_TIMEOUT_S, maximum: CHECK_MAX_TIMEOUT_S, description: `seconds for the whole check (default ${CHECK_DEFAULT_TIMEOUT_S})` });
/** HTTP_MAX_BODY_BYTES in words, as the descriptions say it. */
const MAX_BODY = `${HTTP_MAX_BODY_BYTES / (1024 * 1024)} MiB`;
const Ms = (description: string) => Type.Number({ description });

export const HttpCheckBody = Type.Object({
  url: Type.String({ minLength: 1, maxLength: HTTP_MAX_URL_CHARS, description: 'an http:// or https:// URL, without user name or password' }),
  method: Type.Optional(Type.Union([Type.Literal('GET'), Type.Literal('HEAD')], { default: 'GET', description: 'default GET' })),
  follow_redirects: Type.Optional(
    Type.Boolean({ default: true, description: `default true; at most ${HTTP_MAX_REDIRECTS} redirects, each target checked by the target policy` }),
  ),
  timeout: Type.Optional(CheckTimeout),
});

export const HttpCheckResult = Type.Object({
  url: Type.String(),
  final_url: Type.String({ description: 'the URL of the last request made' }),
  ip: Nullable(Type.String({ description: 'the address the last request went to' })),
  status: Nullable(Type.Integer({ description: 'the status of the last answer; null when none came' })),
  http_version: Nullable(Type.String({ description: '1.1 or 1.0' })),
  redirects: Type.Array(
    Type.Object({ url: Type.String(), status: Type.Integer(), location: Type.String({ description: 'the absolute URL followed' }) }),
    { description: 'the redirects followed, in order' },
  ),
  timings: Type.Object(
    {
      dns: Nullable(Ms('name resolved, ms from the start of the last request (curl time_namelookup)')),
      connect: Nullable(Ms('TCP connected (curl time_connect)')),
      tls: Nullable(Ms('TLS handshake done (curl time_appconnect); null over http')),
      ttfb: Nullable(Ms('first byte of the answer (curl time_starttransfer)')),
      total: Ms('the whole check, redirects included, ms (curl time_total)'),
      redirect: Ms('the redirects before the last request, ms (curl time_redirect)'),
    },
    { description: 'milliseconds' },
  ),
  headers: Type.Record(Type.String(), Type.String(), { description: 'the last answer’s headers, names lowercased, repeated ones joined with ", "' }),
  body_bytes: Type.Integer({ description: `body bytes read, at most ${MAX_BODY}; the body is never kept` }),
  body_sha256: Nullable(Type.String({ description: 'SHA-256 (hex) of the bytes read' })),
  body_truncated: Type.Boolean({ description: `the body went on past ${MAX_BODY} and was not read further` }),
  tls: Nullable(Type.Object({ protocol: Nullable(Type.String()), cipher: Nullable(Type.String()) })),
  error: Nullable(Type.String({ description: 'why the check ended without a full answer: DNS, connect, TLS, timeout, a refused or looping redirect' })),
});
type _Described = Assert<Describes<typeof HttpCheckResult, DomainHttpCheckResult>>;
