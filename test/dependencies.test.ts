import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { test } from 'node:test';
import Fastify from 'fastify';
import { PACKAGE_DIR } from '../src/config.js';

/**
 * Issue 16: `npm install` on Node 20 warns about no dependency (EBADENGINE). package.json's
 * "overrides" pin cookie (light-my-request) and content-disposition (@fastify/static) to the
 * last versions that declare Node 18+; the two uses below are what their consumers call.
 */

const require = createRequire(import.meta.url);
// semver comes with npm's own tool chain (autocannon, prebuild-install); only this test uses it.
const semver = require('semver') as { satisfies: (version: string, range: string) => boolean };

test('every locked package accepts the running Node (npm install prints no EBADENGINE)', () => {
  const lock = JSON.parse(readFileSync(join(PACKAGE_DIR, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { version?: string; engines?: { node?: string } | string[] }>;
  };
  const refusing = Object.entries(lock.packages)
    .filter(([, p]) => !Array.isArray(p.engines) && p.engines?.node !== undefined && !semver.satisfies(process.versions.node, p.engines.node))
    .map(([path, p]) => `${path}@${p.version} wants node ${(p.engines as { node: string }).node}`);
  assert.deepEqual(refusing, []);
});

test('the pinned cookie and content-disposition work for their consumers (inject cookies, reply.download)', async (t) => {
  const app = Fastify();
  t.after(() => app.close());
  await app.register((await import('@fastify/static')).default, { root: join(PACKAGE_DIR, 'docs'), serve: false });
  app.get('/cookie', async (request) => ({ cookie: request.headers.cookie }));
  app.get('/download', (_request, reply) => reply.download('operations.md', 'ops guide.md'));

  const cookie = await app.inject({ url: '/cookie', cookies: { a: '1', b: 'x y' } });
  assert.deepEqual(cookie.json(), { cookie: 'a=1; b=x%20y' });
  const download = await app.inject({ url: '/download' });
  assert.equal(download.statusCode, 200);
  assert.equal(download.headers['content-disposition'], 'attachment; filename="ops guide.md"');
});
