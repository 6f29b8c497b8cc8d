import { Type } from 'typebox';
import { PROXY_BULK_MAX, type ProxyBulkItem as DomainProxyBulkItem } from '../../domain/proxy/index.js';
import { PROXY_FORMS, proxyFlags, proxyResultFields } from '../proxy-check/schema.js';
import { BulkEntry, EntryErrorCode } from '../shared/bulk-entries.js';
import type { Assert, Describes } from '../shared/shape.js';

export const ProxyBulkBody = Type.Object({
  proxies: Type.Array(BulkEntry(PROXY_FORMS), { minItems: 1, maxItems: PROXY_BULK_MAX }),
  ...proxyFlags,
});

/** A bulk item: a result, or for a refused entry the same fields with `error_code` (no host and port when it did not parse). */
export const ProxyBulkItem = Type.Object({
  ...proxyResultFields,
  host: Type.Optional(proxyResultFields.host),
  port: Type.Optional(proxyResultFields.port),
  error_code: EntryErrorCode,
});
type _Described = Assert<Describes<typeof ProxyBulkItem, DomainProxyBulkItem>>;
