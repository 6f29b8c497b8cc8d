// Prepares `.test-build/`, the tree `npm test` runs: a copy of the package's files that tests
// read (sources, fixtures, docs, package.json), into which `tsc` then writes the compiled
// JavaScript beside each .ts file (see package.json "test").
//
// Why: under Node 20 a TypeScript loader (tsx) runs its module hooks on a separate thread, and
// every import of every test process and every `netdiag` a test spawns, node_modules included,
// makes a round trip to it: about 1–2 s of CPU per process, some 40 % of the suite's CPU.
// Compiled once per run, the tests and the processes they start load plain JavaScript. Nothing
// here is a build step for users: `npm start` and `bin/netdiag.js` still run the sources
// through tsx; bin/netdiag.js prefers compiled JavaScript only when it sits beside the sources.
// Plain JavaScript, run with no loader.
import { cpSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const TREE = join(ROOT, '.test-build');
const COPIED = ['src', 'test', 'clients', 'bench', 'scripts', 'bin', 'docs', 'package.json', 'package-lock.json', 'tsconfig.json', 'redocly.yaml', 'README.md'];

rmSync(TREE, { recursive: true, force: true });
mkdirSync(TREE);
// Packages resolve from the repository's node_modules (the tree sits inside the repository);
// the link serves the tests that name a path under the package directory's node_modules.
symlinkSync(join('..', 'node_modules'), join(TREE, 'node_modules'));
for (const entry of COPIED) {
  cpSync(join(ROOT, entry), join(TREE, entry), { recursive: true, filter: (src) => !src.includes(`${join('clients', 'typescript', 'node_modules')}`) });
}
