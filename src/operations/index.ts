import type { JobOperations } from '../domain/jobs/operations.js';
import { dnsLookup } from './dns-lookup/index.js';
import { dnsLookupBulk } from './dns-lookup-bulk/index.js';
import { dnsWhois } from './dns-whois/index.js';
import { httpCheck } from './http-check/index.js';
import { ipLookup } from './ip-lookup/index.js';
import { ipLookupBulk } from './ip-lookup-bulk/index.js';
import { ipWhois } from './ip-whois/index.js';
import { ipv6Expand } from './ipv6-expand/index.js';
import { ipv6Test } from './ipv6-test/index.js';
import { ipv6Validate } from './ipv6-validate/index.js';
import { jobOperation, type AnyOperation, type OperationDeps } from './operation.js';
import { mtr } from './mtr/index.js';
import { ping } from './ping/index.js';
import { pingTcp } from './ping-tcp/index.js';
import { traceroute } from './traceroute/index.js';
import { portScan } from './port-scan/index.js';
import { portScanCommon } from './port-scan-common/index.js';
import { portScanRange } from './port-scan-range/index.js';
import { proxyCheck } from './proxy-check/index.js';
import { proxyCheckBulk } from './proxy-check-bulk/index.js';
import { tlsCheck } from './tls-check/index.js';

export { checkTarget, defineOperation, jobOperation, type AnyOperation, type Operation, type OperationDeps, type RunContext } from './operation.js';

/**
 * Every POST endpoint that may run as a job, each declared in its folder (src/operations/<tool>/).
 * This order is the routes', so the OpenAPI document's, the MCP tools' and the CLI's.
 */
export const OPERATIONS: readonly AnyOperation[] = [
  ipv6Validate,
  ipv6Expand,
  ipv6Test,
  dnsLookup,
  dnsLookupBulk,
  dnsWhois,
  ipLookup,
  ipLookupBulk,
  ipWhois,
  proxyCheck,
  proxyCheckBulk,
  portScan,
  portScanRange,
  portScanCommon,
  pingTcp,
  ping,
  traceroute,
  mtr,
  httpCheck,
  tlsCheck,
];

/** The job service's view of the operations: what it runs for an endpoint. */
export function jobOperations(deps: OperationDeps): JobOperations {
  const byPath = new Map(OPERATIONS.map((op) => [op.path, jobOperation(op, deps)]));
  return (endpoint) => byPath.get(endpoint);
}
