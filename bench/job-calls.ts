import { performance } from 'node:perf_hooks';

/** Issue 18's part 1 calls, shared by bench/jobs.ts and bench/jobs-ab.ts: a 1000-port loopback scan. */
export const SCAN_BODY = { host: '127.0.0.1', ports: '1-1000', timeout: 1 };

const post = (base: string, token: string, extra: Record<string, string> = {}) =>
  fetch(`${base}/api/port/scan-range`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...extra },
    body: JSON.stringify(SCAN_BODY),
  });

/** The scan synchronously: ms to its whole answer. */
export async function scanSync(base: string, token: string): Promise<number> {
  const t0 = performance.now();
  const res = await post(base, token);
  const { data } = (await res.json()) as { data: unknown[] };
  if (res.status !== 200 || data.length !== 1000) throw new Error(`sync scan: ${res.status}`);
  return performance.now() - t0;
}

/** The scan as a job: ms from the POST (Prefer: respond-async) to the last line of its NDJSON stream. */
export async function scanAsJob(base: string, token: string): Promise<number> {
  const t0 = performance.now();
  const res = await post(base, token, { prefer: 'respond-async' });
  const { id } = ((await res.json()) as { data: { id: string } }).data;
  const stream = await fetch(`${base}/api/jobs/${id}`, { headers: { authorization: `Bearer ${token}`, accept: 'application/x-ndjson' } });
  const last = JSON.parse((await stream.text()).trim().split('\n').at(-1)!) as { status: string; result: unknown[] };
  if (last.status !== 'succeeded' || last.result.length !== 1000) throw new Error(`job: ${last.status}`);
  return performance.now() - t0;
}
