import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { decodeAnswer, inlineDecoder, type RdapDecoder } from '../src/domain/rdap/decode.js';
import { RDAP_MAX_RESPONSE_BYTES } from '../src/domain/rdap/defaults.js';
import { WorkerRdapDecoder } from '../src/infra/rdap/worker-decoder.js';
import { registryDomain } from '../test/fixtures/rdap/objects.js';
import { median } from './stats.js';

/**
 * Issue 27's bound: reading an RDAP answer must not hold the event loop over 20 ms. This compares,
 * in the same run, the longest event-loop stall (monitorEventLoopDelay, 1 ms resolution) while one
 * answer is decoded in line (what src/domain/rdap does with no decoder given) and in the worker
 * thread src/infra/rdap gives it, for a real-sized answer (Verisign's, ~2 KiB: in line either way)
 * and the largest the 1 MiB cap admits (thousands of entities, name servers, statuses).
 *
 * Run: node --import tsx bench/rdap-decode.ts     (ROUNDS=15 per case, after 3 warm-up rounds)
 */

const ROUNDS = Number(process.env.ROUNDS ?? 15);

function largest(): Uint8Array {
  const base = registryDomain('https://rdap.example-registrar.test/domain/example.com');
  const entity = { objectClassName: 'entity', roles: ['technical'], vcardArray: ['vcard', [['version', {}, 'text', '4.0'], ['fn', {}, 'text', 'x'.repeat(40)], ['email', {}, 'text', 'noc@example.test']]] };
  const padded = {
    ...base,
    nameservers: Array.from({ length: 3000 }, (_, i) => ({ objectClassName: 'nameserver', ldhName: `ns${i}.example.net` })),
    status: Array.from({ length: 3000 }, (_, i) => `client hold ${i}`),
    entities: [...(base.entities as unknown[]), ...Array.from({ length: 4000 }, () => entity)],
  };
  let bytes = Buffer.from(JSON.stringify(padded));
  while (bytes.length > RDAP_MAX_RESPONSE_BYTES) {
    padded.entities.pop();
    bytes = Buffer.from(JSON.stringify(padded));
  }
  return bytes;
}

async function stallOf(decoder: RdapDecoder, body: Uint8Array): Promise<{ stall: number; total: number }> {
  const h = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  // Let the histogram's timer run once before the work starts.
  await new Promise((resolve) => setTimeout(resolve, 5));
  const t0 = performance.now();
  const answer = await decoder.decode(body, 'domain');
  const total = performance.now() - t0;
  await new Promise((resolve) => setTimeout(resolve, 5));
  h.disable();
  if (answer.error !== null || answer.domain === null) throw new Error(`decode failed: ${answer.error}`);
  return { stall: h.max / 1e6, total };
}

const small = Buffer.from(JSON.stringify(registryDomain('https://rdap.example-registrar.test/domain/example.com')));
const big = largest();
const worker = new WorkerRdapDecoder();
const cases: Array<[string, RdapDecoder, Uint8Array]> = [
  [`real answer (${small.length} B), in line`, inlineDecoder, small],
  [`largest answer (${big.length} B), in line`, inlineDecoder, big],
  [`largest answer (${big.length} B), worker thread`, worker, big],
];
decodeAnswer(small, 'domain');
console.log(`RDAP answer decoding: longest event-loop stall, median of ${ROUNDS} rounds (max in brackets)`);
for (const [name, decoder, body] of cases) {
  for (let i = 0; i < 3; i++) await stallOf(decoder, body);
  const stalls: number[] = [];
  const totals: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const r = await stallOf(decoder, body);
    stalls.push(r.stall);
    totals.push(r.total);
  }
  console.log(`  ${name.padEnd(44)} stall ${median(stalls).toFixed(1)} ms [${Math.max(...stalls).toFixed(1)}], decode ${median(totals).toFixed(1)} ms`);
}
await worker.close();
