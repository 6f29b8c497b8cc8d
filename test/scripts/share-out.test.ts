import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { shareOut } from '../../scripts/share-out.mjs';

/**
 * `npm test` shares the test files out between its processes by the last run's times
 * (scripts/share-out.mjs), which its own reporter writes (scripts/test-durations.mjs).
 */

const FILES = ['a', 'b', 'c', 'd', 'e', 'f', 'g'].map((n) => `test/${n}.test.ts`);

test('without times: round robin over the files in their order', () => {
  assert.deepEqual(shareOut(FILES, 3, null), [
    ['test/a.test.ts', 'test/d.test.ts', 'test/g.test.ts'],
    ['test/b.test.ts', 'test/e.test.ts'],
    ['test/c.test.ts', 'test/f.test.ts'],
  ]);
  assert.deepEqual(shareOut(FILES.slice(0, 2), 3, null), [['test/a.test.ts'], ['test/b.test.ts']], 'no empty group');
});

test('with times: groups of even time, the longest first; a file the last run did not see counts as a median one', () => {
  const ms = { 'test/a.test.ts': 50, 'test/b.test.ts': 40, 'test/c.test.ts': 30, 'test/d.test.ts': 20, 'test/e.test.ts': 10, 'test/f.test.ts': 10 };
  const groups = shareOut(FILES, 3, ms);
  // g counts as 30 (the median). Longest first, each to the group with the least so far:
  // a, b, c, then g → c, d → b, e → a, f → a.
  assert.deepEqual(groups, [
    ['test/a.test.ts', 'test/e.test.ts', 'test/f.test.ts'],
    ['test/b.test.ts', 'test/d.test.ts'],
    ['test/c.test.ts', 'test/g.test.ts'],
  ]);
});

test('the reporter writes each test file\'s time, by the suite named by its path', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'netdiag-durations-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'process.test.mjs');
  writeFileSync(file, `import { describe, test } from 'node:test';
describe('test/x.test.ts', () => { test('waits', () => new Promise((r) => setTimeout(r, 50))); });
describe('test/y.test.ts', () => { test('fails', () => { throw new Error('no'); }); });
describe('not a file', () => { test('t', () => {}); });
`);
  const reporter = fileURLToPath(new URL('../../scripts/test-durations.mjs', import.meta.url));
  // Without NODE_TEST_CONTEXT: in it, a runner started by a test reports to its parent instead.
  const { NODE_TEST_CONTEXT: _parent, ...env } = process.env;
  const out = spawnSync(process.execPath, ['--test', `--test-reporter=${reporter}`, '--test-reporter-destination=stdout', file], { encoding: 'utf8', env });
  const ms = JSON.parse(out.stdout) as Record<string, number>;
  assert.deepEqual(Object.keys(ms).sort(), ['test/x.test.ts', 'test/y.test.ts']);
  assert.ok(ms['test/x.test.ts']! >= 50, `x took ${ms['test/x.test.ts']} ms`);
});
