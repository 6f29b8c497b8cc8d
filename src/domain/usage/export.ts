import { stringify } from 'csv-stringify/sync';
import { ValidationError } from '../../errors.js';
import { USAGE_DAYS_DEFAULT, USAGE_DAYS_MAX, USAGE_DAYS_MIN, utcDay, type ExportRow } from './service.js';

/** The columns of the usage export, in order: the CSV's header row. */
export const EXPORT_COLUMNS = ['date', 'endpoint', 'requests', 'successful', 'failed', 'rate_limited', 'avg_response_time'] as const;

export type ExportFormat = 'json' | 'csv';

/** The export as CSV: a header row, then one line per row, CRLF line ends. */
export function exportCsv(rows: readonly ExportRow[]): string {
  return stringify(rows as ExportRow[], { header: true, columns: [...EXPORT_COLUMNS], record_delimiter: 'windows' });
}

/** The name a browser saves the CSV under: the UTC day of the export. */
export function exportFileName(now: number): string {
  return `netdiag-usage-${utcDay(now)}.csv`;
}

/** The message of the JSON export's envelope. */
export function exportMessage(days: number): string {
  return `usage of the last ${days} days per endpoint`;
}

/**
 * `days` and `format` of an export from a query string the API's schema did not check (the
 * dashboard's): absent is the default, anything else must be an integer 1–365 and json or csv
 * (any case), as the API accepts them.
 */
export function exportOptions(query: unknown): { days: number; format: ExportFormat } {
  const q = typeof query === 'object' && query !== null ? (query as Record<string, unknown>) : {};
  const rawDays = Object.hasOwn(q, 'days') ? q.days : undefined;
  const rawFormat = Object.hasOwn(q, 'format') ? q.format : undefined;
  let days = USAGE_DAYS_DEFAULT;
  if (rawDays !== undefined) {
    if (typeof rawDays !== 'string' || !/^[0-9]{1,3}$/.test(rawDays)) {
      throw new ValidationError('days', `must be a whole number from ${USAGE_DAYS_MIN} to ${USAGE_DAYS_MAX}`);
    }
    days = Number(rawDays);
    if (days < USAGE_DAYS_MIN || days > USAGE_DAYS_MAX) {
      throw new ValidationError('days', `must be a whole number from ${USAGE_DAYS_MIN} to ${USAGE_DAYS_MAX}`);
    }
  }
  let format: ExportFormat = 'json';
  if (rawFormat !== undefined) {
    const f = typeof rawFormat === 'string' ? rawFormat.toLowerCase() : '';
    if (f !== 'json' && f !== 'csv') throw new ValidationError('format', 'must be json or csv');
    format = f;
  }
  return { days, format };
}
