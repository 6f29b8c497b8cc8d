import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { PACKAGE_DIR } from '../../../src/config.js';
import { startDnsServer } from '../../fixtures/dns-server.js';
import { build, tempDir } from '../../helpers/build.js';

/**
 * The five lines that open clients/typescript/README.md are real: they type-check with the
 * package's own compiler options (as a user's strict project would: `data.records[0].ttl` with
 * no cast) and they run against a live server.
 */

const run = promisify(execFile);
const CLIENT = join(PACKAGE_DIR, 'clients/typescript');
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

function readmeUsage(): string {
  const readme = readFileSync(join(CLIENT, 'README.md'), 'utf8');
  const block = /^```ts\n([\s\S]*?)^```/m.exec(readme)?.[1];
  assert.ok(block, 'README.md opens with a ```ts block');
  assert.equal(block.trimEnd().split('\n').length, 5, 'five lines of usage');
  assert.match(block, /from '@netdiag\/client'/);
  return block;
}

test("README's usage type-checks as a user's strict project would compile it", async (t) => {
  const dir = tempDir(t, 'netdiag-readme-');
  writeFileSync(join(dir, 'usage.mts'), readmeUsage());
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      extends: join(CLIENT, 'tsconfig.json'),
      compilerOptions: { noEmit: true, rootDir: '/', paths: { '@netdiag/client': [join(CLIENT, 'src/index.ts')] }, typeRoots: [join(PACKAGE_DIR, 'node_modules/@types')] },
      files: ['usage.mts'],
    }),
  );
  const out = await run(process.execPath, [tsc, '-p', dir]).catch((err: { stdout: string }) => err);
  assert.equal(out.stdout, '', 'tsc reports no error');
});

test("README's usage runs against a live server: a lookup's TTL, then a job's items and the job", async (t) => {
  const dns = await startDnsServer({ records: [{ name: 'example.com', type: 'A', ttl: 300, data: '127.0.0.1' }] });
  t.after(() => dns.close());
  const b = await build(t, { env: { NETDIAG_DNS_SERVERS: `${dns.host}:${dns.port}`, NETDIAG_ALLOW_TARGETS: '127.0.0.0/8' } });
  const dir = tempDir(t, 'netdiag-readme-');
  const file = join(dir, 'usage.mts');
  writeFileSync(file, readmeUsage().replace(`'@netdiag/client'`, `'${pathToFileURL(join(CLIENT, 'src/index.ts')).href}'`));
  const { stdout } = await run(process.execPath, ['--import', 'tsx', file], { env: { ...process.env, NETDIAG_URL: b.url, NETDIAG_TOKEN: b.token }, cwd: PACKAGE_DIR });
  const lines = stdout.trimEnd().split('\n');
  assert.equal(lines[0], '300 127.0.0.1');
  const events = lines.slice(1).join('\n');
  assert.equal(events.match(/type: 'item'/g)?.length, 2, stdout);
  assert.match(events, /type: 'job'[\s\S]*status: 'succeeded'/);
});

test("installed from its folder (npm install /path/to/clients/typescript: a link in node_modules), README's usage runs with plain node", async (t) => {
  const dns = await startDnsServer({ records: [{ name: 'example.com', type: 'A', ttl: 300, data: '127.0.0.1' }] });
  t.after(() => dns.close());
  const b = await build(t, { env: { NETDIAG_DNS_SERVERS: `${dns.host}:${dns.port}`, NETDIAG_ALLOW_TARGETS: '127.0.0.0/8' } });
  const dir = tempDir(t, 'netdiag-installed-');
  // What npm writes for a folder dependency; its entry is dist/, which `npm install` here built (the prepare script).
  mkdirSync(join(dir, 'node_modules', '@netdiag'), { recursive: true });
  symlinkSync(CLIENT, join(dir, 'node_modules', '@netdiag', 'client'), 'dir');
  writeFileSync(join(dir, 'usage.mjs'), readmeUsage());
  const { stdout } = await run(process.execPath, [join(dir, 'usage.mjs')], { env: { ...process.env, NETDIAG_URL: b.url, NETDIAG_TOKEN: b.token }, cwd: dir });
  assert.equal(stdout.split('\n')[0], '300 127.0.0.1');
  assert.match(stdout, /type: 'job'[\s\S]*status: 'succeeded'/);
});
