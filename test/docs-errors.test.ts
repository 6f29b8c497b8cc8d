import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { ERROR_CODES } from '../src/errors.js';

test('docs/errors.md lists exactly the codes and statuses of src/errors.ts', () => {
  const text = readFileSync(new URL('../docs/errors.md', import.meta.url), 'utf8');
  const documented = Object.fromEntries(
    [...text.matchAll(/^\| (\d{3}) \| `([a-z_]+)` \|/gm)].map((m) => [m[2]!, Number(m[1])]),
  );
  assert.deepEqual(documented, { ...ERROR_CODES });
});
