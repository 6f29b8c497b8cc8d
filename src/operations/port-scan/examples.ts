import { ok, one, type OperationExamples } from '../shared/examples.js';

/** Port 443 of example.com, open; portExample() makes the others: the range scans and the jobs' examples show them too. */
export const PORT_443 = {
  host: 'example.com',
  ip: '93.184.215.14',
  port: 443,
  open: true,
  state: 'open',
  service: 'https',
  response_time: 23.61,
  queued_ms: 0,
  reason: 'connected',
  error: null,
};

export function portExample(port: number, service: string | null, state: 'open' | 'closed' | 'filtered', responseTime: number): Record<string, unknown> {
  const reason = state === 'open' ? 'connected' : state === 'closed' ? 'connection refused' : 'no answer within 3 s';
  return { ...PORT_443, port, service, state, open: state === 'open', response_time: responseTime, reason };
}

export const portScanExamples: OperationExamples = {
  body: one('one port', { host: 'example.com', port: 443, timeout: 5 }),
  ok: ok(PORT_443, 'port 443 is open'),
  invalid: { field: 'port', message: 'port: must be between 1 and 65535' },
};
