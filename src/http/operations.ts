import type { JobOperation } from '../domain/jobs/service.js';
import { jobOperation, type AnyOperation } from './operation.js';
import { dnsOperations } from './routes/dns.js';
import { ipOperations } from './routes/ip.js';
import { ipv6Operations } from './routes/ipv6.js';
import { portOperations } from './routes/ports.js';
import { proxyOperations } from './routes/proxy.js';
import type { RouteDeps } from './routes/deps.js';

/** Every POST endpoint that may run as a job, by its path under /api. */
export const OPERATIONS: readonly AnyOperation[] = [...ipv6Operations, ...dnsOperations, ...ipOperations, ...proxyOperations, ...portOperations];

/** The job service's view of the operations: what it runs for an endpoint. */
export function jobOperations(deps: RouteDeps): (endpoint: string) => JobOperation | undefined {
  const byPath = new Map(OPERATIONS.map((op) => [op.path, jobOperation(op, deps)]));
  return (endpoint) => byPath.get(endpoint);
}
