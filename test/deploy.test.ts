import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { PACKAGE_DIR } from '../src/config.js';

/** docs/deploy.md's systemd units as shipped: systemd reads them without a complaint. */

const run = promisify(execFile);
const SYSTEMD_ANALYZE = '/usr/bin/systemd-analyze';
const noSystemd = existsSync(SYSTEMD_ANALYZE) ? false : `no ${SYSTEMD_ANALYZE}: the unit files were not verified; install Debian's systemd package to verify them`;

for (const unit of ['netdiag.service', 'netdiag-worker.service']) {
  test(`deploy/${unit} passes systemd-analyze verify`, { skip: noSystemd }, async () => {
    const { stdout, stderr } = await run(SYSTEMD_ANALYZE, ['verify', join(PACKAGE_DIR, 'deploy', unit)]);
    assert.equal(`${stdout}${stderr}`.trim(), '');
  });
}

test('the units and the image run the server the way README says it must run (the young-generation flag, SIGTERM to drain)', () => {
  for (const file of ['deploy/netdiag.service', 'deploy/netdiag-worker.service', 'Dockerfile', 'compose.yaml']) {
    const text = readFileSync(join(PACKAGE_DIR, file), 'utf8');
    assert.match(text, /--max-semi-space-size=64/, file);
    assert.match(text, /bin\/netdiag\.js"?,? "?(serve|worker)/, file);
  }
});
