import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { build, tempDir } from '../helpers/build.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const REDOCLY = createRequire(import.meta.url).resolve('@redocly/cli/bin/cli.js');

interface LintReport {
  totals: { errors: number; warnings: number; ignored: number };
  problems: { ruleId: string; severity: string; message: string; location: { pointer: string }[] }[];
}

test('the published document lints clean with Redocly CLI (recommended rules, redocly.yaml)', async (t) => {
  const { url } = await build(t);
  const res = await fetch(`${url}/api/openapi.json`);
  assert.equal(res.status, 200);
  const file = join(tempDir(t), 'openapi.json');
  writeFileSync(file, await res.text());
  // Redocly exits 1 when it finds errors: the report is read either way.
  const run = await promisify(execFile)(process.execPath, [REDOCLY, 'lint', file, '--config', join(ROOT, 'redocly.yaml'), '--format', 'json'], {
    cwd: ROOT,
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    maxBuffer: 16 * 1024 * 1024,
  }).catch((err: { stdout?: string; stderr?: string }) => ({ stdout: err.stdout ?? '', stderr: err.stderr ?? '' }));
  const report = JSON.parse(run.stdout) as LintReport;
  const found = report.problems.map((p) => `${p.severity} ${p.ruleId} at ${p.location[0]?.pointer ?? '?'}: ${p.message}`);
  assert.equal(report.totals.errors, 0, found.join('\n'));
  assert.equal(report.totals.warnings, 0, found.join('\n'));
});
