import assert from 'node:assert/strict';
import type { JobView } from '../../src/domain/jobs/types.js';

/**
 * A job once it has finished, awaited on its NDJSON stream (one line per item, then the finished
 * job): one request that ends when the job does, instead of polling its view on a timer. `text`
 * is the whole stream, items included.
 */
export async function finishedJob<R = unknown>(api: (path: string, init?: RequestInit) => Promise<Response>, id: string): Promise<{ job: JobView & { result: R }; text: string }> {
  const res = await api(`/api/jobs/${id}`, { headers: { accept: 'application/x-ndjson' } });
  const text = await res.text();
  assert.equal(res.status, 200, text);
  const last = text.trimEnd().split('\n').at(-1) ?? '';
  return { job: JSON.parse(last) as JobView & { result: R }, text };
}
