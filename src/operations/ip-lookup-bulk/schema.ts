import { Type } from 'typebox';
import { IP_BULK_MAX, type IpBulkItem as DomainIpBulkItem } from '../../domain/ip/index.js';
import { IpFlags, ipResultFields } from '../ip-lookup/schema.js';
import { BulkEntry, EntryError, EntryErrorCode } from '../shared/bulk-entries.js';
import { optionalExcept } from '../shared/schema.js';
import type { Assert, Describes } from '../shared/shape.js';

export const IpBulkBody = Type.Object({ ips: Type.Array(BulkEntry('an IPv4 or IPv6 address'), { minItems: 1, maxItems: IP_BULK_MAX }), ...IpFlags });

/** A bulk item is a result, or `{ip, error, error_code}` for an entry that is not an address. */
export const IpBulkItem = Type.Object({
  ...optionalExcept(ipResultFields, ['ip']),
  error: Type.Optional(EntryError),
  error_code: EntryErrorCode,
});
type _Described = Assert<Describes<typeof IpBulkItem, DomainIpBulkItem>>;
