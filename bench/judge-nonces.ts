import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { median } from './stats.js';

/**
 * The judge's nonce work per proxy check, alone: issue a nonce per protocol try, admit what the
 * relayed requests ask for, revoke the check's nonces, on the real SQLite store (a fresh file),
 * 100 checks at a time as a bulk has them. CPU of this process per check, so none of the
 * sockets' noise; BASELINE_TREE=<checkout> measures that checkout's Judge and store the same way,
 * alternating, in the same run. Checks are revoked one after another, so revocations never share a
 * write (the least the group commit can do).
 *
 * Two shapes of check, from the proxy bulk at 200 ms (bench/proxy-bulk.ts): `check_speed: false`
 * with 2 tries per proxy (the winner's echo admitted), and every check with 2 tries (the winner's
 * echo, download and upload admitted).
 *
 * Run: node --import tsx bench/judge-nonces.ts
 *      BASELINE_TREE=../wt-before node --import tsx bench/judge-nonces.ts
 */

type Use = 'echo' | 'download' | 'upload';
interface JudgeLike {
  issue(uses?: readonly Use[]): Promise<string>;
  admit(nonce: string, use: Use): Promise<boolean>;
  revoke(...nonces: string[]): Promise<void>;
}
interface Tree {
  label: string;
  Judge: new (opts: { ledger: unknown; secret: string }) => JudgeLike;
  openSqliteStore: (path: string) => Promise<{ judge: unknown; close(): Promise<void> }>;
}

const BULK = 100;
const BULKS = Number(process.env.BULKS ?? 40);
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const TRIES = 2;
const SECRET = 'bench-judge-secret-0123456789abcdef';

async function load(label: string, root: string): Promise<Tree> {
  const proxy = (await import(join(root, 'src/domain/proxy/index.ts'))) as { Judge: Tree['Judge'] };
  const sqlite = (await import(join(root, 'src/infra/store/sqlite.ts'))) as { openSqliteStore: Tree['openSqliteStore'] };
  return { label, Judge: proxy.Judge, openSqliteStore: sqlite.openSqliteStore };
}

/** CPU µs per check of BULKS bulks of BULK checks, each admitting `uses` of its winner's nonce. */
async function run(tree: Tree, uses: readonly Use[]): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'netdiag-judge-bench-'));
  const store = await tree.openSqliteStore(join(dir, 'judge.db'));
  try {
    const judge = new tree.Judge({ ledger: store.judge, secret: SECRET });
    await judge.revoke(await judge.issue(uses));
    const before = process.cpuUsage();
    for (let b = 0; b < BULKS; b++) {
      const checks = await Promise.all(Array.from({ length: BULK }, () => Promise.all(Array.from({ length: TRIES }, () => judge.issue(uses)))));
      await Promise.all(checks.map(async (nonces) => {
        const winner = nonces[0]!;
        for (const use of uses) if (!(await judge.admit(winner, use))) throw new Error(`${tree.label}: ${use} refused`);
      }));
      // One after another: checks of a real bulk end apart, so no revocation shares a write here.
      for (const nonces of checks) await judge.revoke(...nonces);
    }
    const cpu = process.cpuUsage(before);
    return (cpu.user + cpu.system) / (BULKS * BULK);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const trees = [await load(process.env.BASELINE_TREE ? 'after' : 'this tree', resolve('.'))];
if (process.env.BASELINE_TREE) trees.unshift(await load('before', resolve(process.env.BASELINE_TREE)));
for (const [name, uses] of [['check_speed: false', ['echo']], ['every check', ['echo', 'download', 'upload']]] as const) {
  const samples = new Map(trees.map((t) => [t.label, [] as number[]]));
  for (let r = 0; r < ROUNDS; r++) for (const t of r % 2 ? [...trees].reverse() : trees) samples.get(t.label)!.push(await run(t, uses));
  for (const t of trees) {
    const s = samples.get(t.label)!;
    console.log(`${name.padEnd(20)} ${t.label.padEnd(10)} judge CPU per check median ${(median(s) / 1000).toFixed(3)} ms (rounds: ${s.map((x) => (x / 1000).toFixed(3)).join(', ')})`);
  }
}
