import { Validator } from '@seriousme/openapi-schema-validator';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { build } from '../helpers/build.js';

/**
 * Every full path of Fastify's route tree (printRoutes): each line is a segment under the line
 * above it at one level less, e.g. `├── api/dns/lookup (POST)` then `│   └── -bulk (POST)`.
 */
function routePaths(tree: string): string[] {
  const stack: string[] = [];
  const paths: string[] = [];
  for (const line of tree.split('\n')) {
    const m = /^([│ ]*)[├└]── (\S+)(?: \(([^)]*)\))?/.exec(line);
    if (!m) continue;
    const depth = m[1]!.length / 4;
    stack.length = depth;
    stack.push(m[2]!);
    if (m[3]) paths.push(stack.join('').replace(/\/+/g, '/'));
  }
  return paths;
}

test('/api/openapi.json is valid OpenAPI 3 and documents every /api route', async (t) => {
  const { url, app } = await build(t);
  const res = await fetch(`${url}/api/openapi.json`);
  assert.equal(res.status, 200);
  const doc = (await res.json()) as { openapi: string; info: { version: string }; paths: Record<string, Record<string, unknown>> };
  const validator = new Validator();
  const result = await validator.validate(doc);
  assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
  assert.match(doc.openapi, /^3\./);
  assert.equal(doc.info.version, '1.0');

  // every /api route the app serves appears in the document (docs and the document itself aside)
  const served = routePaths(app.printRoutes({ commonPrefix: false })).filter(
    (p) => p.startsWith('/api/') && !p.startsWith('/api/docs') && p !== '/api/openapi.json',
  );
  assert.ok(served.includes('/api/user'), `route listing not understood: ${served.join(', ')}`);
  // Fastify's `:id` is OpenAPI's `{id}`.
  for (const path of served) assert.ok(doc.paths[path.replace(/:(\w+)/g, '{$1}')], `${path} is served but not documented`);
  assert.ok(doc.paths['/api/user']?.get);
});

test('/api/docs serves the interactive reference without a token', async (t) => {
  const { url } = await build(t);
  const res = await fetch(`${url}/api/docs/`, { redirect: 'manual' });
  assert.equal(res.status, 200);
  assert.match(await res.text(), /swagger/i);
});
