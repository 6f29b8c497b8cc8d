import type { PortResult, ScanTally } from '../../domain/ports/index.js';
import { checkTarget, type OperationDeps } from '../operation.js';

/** "example.com (93.184.216.34)", or why there is no address. Every result of a scan shares both. */
export function target(first: PortResult): string {
  return first.ip === null ? `${first.host} did not resolve: ${first.reason}` : `${first.host} (${first.ip})`;
}

/** "1000 ports of example.com (93.184.216.34): 3 open, 995 closed, 2 filtered". */
export function tallyMessage(tally: ScanTally): string {
  const first = tally.first;
  // A job run again that had stored its first port: the message is not a job's business.
  if (first === null) return `${tally.ports} ports`;
  return first.ip === null ? target(first) : `${tally.ports} ports of ${target(first)}: ${tally.open} open, ${tally.closed} closed, ${tally.filtered} filtered`;
}

/** The three scans' precheck: the host resolved and checked as the scan would, before any packet. */
export const checkHost = (deps: OperationDeps, host: string) => checkTarget(deps.dialer, host, { field: 'host' });
