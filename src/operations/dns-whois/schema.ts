import { Type } from 'typebox';
import type { RegistrationResult } from '../../domain/rdap/index.js';
import { Domain } from '../dns-lookup/schema.js';
import { Nullable } from '../shared/schema.js';
import type { Assert, Describes } from '../shared/shape.js';

export const WhoisBody = Type.Object({ domain: Domain });

/** One server asked; /ip/whois's hops are the same. */
export const WhoisHop = Type.Object({
  server: Type.String({ description: 'WHOIS: host or host:port; RDAP: the URL asked' }),
  status: Type.String({ description: 'ok, truncated, timeout or failed' }),
  error: Nullable(Type.String()),
  bytes: Type.Integer(),
  response_time: Type.Number(),
});

export const WhoisResult = Type.Object({
  domain: Type.String(),
  registered: Nullable(Type.Boolean({ description: 'null when no server could tell' })),
  registrar: Nullable(Type.String()),
  registrar_url: Nullable(Type.String()),
  whois_server: Nullable(Type.String()),
  creation_date: Nullable(Type.String({ description: 'ISO 8601' })),
  updated_date: Nullable(Type.String({ description: 'ISO 8601' })),
  expiration_date: Nullable(Type.String({ description: 'ISO 8601' })),
  name_servers: Type.Array(Type.String()),
  status: Type.Array(Type.String({ description: 'EPP status codes' })),
  dnssec: Nullable(Type.Boolean()),
  raw: Type.String({ description: 'the registry\'s RDAP JSON text, or the WHOIS servers\' text (bounded)' }),
  hops: Type.Array(WhoisHop),
  error: Nullable(Type.String()),
  source: Type.Union([Type.Literal('rdap'), Type.Literal('whois')], { description: 'rdap, or whois (port 43) for a TLD with no RDAP service' }),
  rdap_server: Nullable(Type.String({ description: 'the registry\'s RDAP base URL asked; null for whois' })),
  registrant: Nullable(Type.String({ description: 'RDAP: the registrant\'s organisation when published' })),
  abuse_email: Nullable(Type.String({ description: 'RDAP: the abuse contact\'s e-mail' })),
});
type _Described = Assert<Describes<typeof WhoisResult, RegistrationResult>>;
