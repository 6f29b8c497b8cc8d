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
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
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

// The list `npm test` hands to `node --test`. Node 20 starts a process per file, and a process
// that builds the app first loads some 1,100 modules and compiles every route's schemas: 2-3 s
// of CPU, most of a small test file's cost. So test files share processes, SHARED_PROCESSES of
// them, each a file that imports its share (round robin over the sorted paths) one after the
// other; their tests run in that order, as they would in their own processes. A file keeps a
// process of its own when its tests need one: it says so in a comment (`own process:` and why:
// Chromium, child servers it kills, timings over a minute), or it has hooks at the top level
// (`before(...)`, `after(...)`), which node:test runs for the whole process, not for the file.
const SHARED_PROCESSES = 10;
const OWN_PROCESS = /^\s*\/\/.*\bown process:/m;
const TOP_LEVEL_HOOK = /^(before|after|beforeEach|afterEach)\(/m;

function testFiles(dir) {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return testFiles(path);
    return entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

const own = [];
const hooked = [];
const shared = [];
for (const file of testFiles('test').sort()) {
  const source = readFileSync(join(ROOT, file), 'utf8');
  (OWN_PROCESS.test(source) ? own : TOP_LEVEL_HOOK.test(source) ? hooked : shared).push(file.replace(/\.ts$/, '.js'));
}
const SHARED_DIR = join(TREE, 'test', 'shared-processes');
mkdirSync(SHARED_DIR);
const groups = Array.from({ length: SHARED_PROCESSES }, () => []);
shared.forEach((file, i) => groups[i % SHARED_PROCESSES].push(file));
const groupFiles = groups
  .filter((files) => files.length > 0)
  .map((files, i) => {
    const path = join(SHARED_DIR, `${i + 1}.test.js`);
    writeFileSync(path, files.map((file) => `await import(${JSON.stringify(`../../${file}`)});\n`).join(''));
    return path;
  });
// Longest first, so that no long one starts last: the files that asked for their own process
// and the shared processes, taking turns, then the files with top-level hooks (short, mostly).
const inTree = (files) => files.map((file) => join(TREE, file));
const owned = inTree(own);
const first = [];
for (let i = 0; i < Math.max(owned.length, groupFiles.length); i++) {
  if (i < owned.length) first.push(owned[i]);
  if (i < groupFiles.length) first.push(groupFiles[i]);
}
writeFileSync(join(TREE, 'test-files.txt'), [...first, ...inTree(hooked)].map((p) => relative(ROOT, p)).join('\n') + '\n');
