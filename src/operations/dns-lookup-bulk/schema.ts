import { Type } from 'typebox';
import { DNS_BULK_MAX_DOMAINS, type DnsBulkItem as DomainDnsBulkItem } from '../../domain/dns/index.js';
import { DOMAIN_DESCRIPTION, Dnssec, RecordType, dnsResultFields } from '../dns-lookup/schema.js';
import { BulkEntry, EntryError, EntryErrorCode } from '../shared/bulk-entries.js';
import { optionalExcept } from '../shared/schema.js';
import type { Assert, Describes } from '../shared/shape.js';

export const DnsBulkBody = Type.Object({
  domains: Type.Array(BulkEntry(DOMAIN_DESCRIPTION), { minItems: 1, maxItems: DNS_BULK_MAX_DOMAINS }),
  type: Type.Optional(RecordType),
  dnssec: Type.Optional(Dnssec),
});

/** A bulk item: a result, or `{domain (as given), type, error, error_code}` for an entry that is not a domain name. */
export const DnsBulkItem = Type.Object({
  ...optionalExcept(dnsResultFields, ['domain', 'type']),
  error: Type.Optional(EntryError),
  error_code: EntryErrorCode,
});
type _Described = Assert<Describes<typeof DnsBulkItem, DomainDnsBulkItem>>;
