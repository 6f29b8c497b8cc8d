// Prepares `.test-build/`, the tree `npm test` (scripts/test.mjs) runs: a copy of the package's
// files that tests read (sources, fixtures, docs, package.json), the JavaScript of each .ts file
// beside it, and the files that group the test files into processes (below).
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
import { shareOut } from './share-out.mjs';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const TREE = join(ROOT, '.test-build');
/** What `npm test` keeps for its next run, where npm's tools keep theirs. */
export const CACHE = join(ROOT, 'node_modules', '.cache', 'netdiag');
/** Each test file's time in the last run (scripts/test-durations.mjs writes it, test.mjs says where). */
export const DURATIONS = join(CACHE, 'test-durations.json');
const COPIED = ['src', 'test', 'clients', 'bench', 'scripts', 'bin', 'docs', 'deploy', 'Dockerfile', 'compose.yaml', 'package.json', 'package-lock.json', 'tsconfig.json', 'redocly.yaml', 'README.md'];

rmSync(TREE, { recursive: true, force: true });
mkdirSync(TREE);
// Packages resolve from the repository's node_modules (the tree sits inside the repository);
// the link serves the tests that name a path under the package directory's node_modules.
symlinkSync(join('..', 'node_modules'), join(TREE, 'node_modules'));
for (const entry of COPIED) {
  cpSync(join(ROOT, entry), join(TREE, entry), { recursive: true, filter: (src) => !src.includes(`${join('clients', 'typescript', 'node_modules')}`) });
}

/** The paths under `dir` (relative to `base`) of the files whose names `keep` accepts; node_modules left out. */
function filesUnder(base, dir, keep) {
  return readdirSync(join(base, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : filesUnder(base, path, keep);
    return keep(entry.name) ? [path] : [];
  });
}

// The JavaScript, written by esbuild from the copied TypeScript of the directories tsconfig.json
// includes, in about a second and with no type check (scripts/test.mjs runs that beside the
// suite): tsconfig's isolatedModules and verbatimModuleSyntax keep a file-by-file transpile exact.
const { include } = JSON.parse(readFileSync(join(ROOT, 'tsconfig.json'), 'utf8'));
const { build } = await import('esbuild');
await build({
  entryPoints: include.flatMap((dir) => filesUnder(TREE, dir, (name) => /\.m?ts$/.test(name) && !/\.d\.m?ts$/.test(name))).map((path) => join(TREE, path)),
  outdir: TREE,
  outbase: TREE,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  tsconfig: join(ROOT, 'tsconfig.json'),
  logLevel: 'warning',
});

// The processes `npm test` runs. Node 20 starts a process per file, and a process that builds
// the app first loads some 1,100 modules and compiles every route's schemas: 2-3 s of CPU, most
// of a small test file's cost. So test files share processes, SHARED_PROCESSES of them, each
// importing its share (scripts/share-out.mjs) one after the other. Each file is
// imported inside a `describe` named by its path, so that its tests, and any hooks it declares
// at its top level, belong to it alone and run in its order, as they would in a process of its
// own. A file keeps a process of its own when its tests need one, and says so in a comment
// (`own process:` and why: child servers it kills, timings over a minute). The files that
// drive Chromium (`Chromium process:`) share one process, so that one browser runs at a time:
// three at once on two cores took 157 s of their processes' time against 52 s one after another.
const SHARED_PROCESSES = 12;
const OWN_PROCESS = /^\s*\/\/.*\bown process:/m;
const CHROMIUM_PROCESS = /^\s*\/\/.*\bChromium process:/m;

const chromium = [];
const own = [];
const shared = [];
for (const file of filesUnder(ROOT, 'test', (name) => name.endsWith('.test.ts')).sort()) {
  const source = readFileSync(join(ROOT, file), 'utf8');
  (CHROMIUM_PROCESS.test(source) ? chromium : OWN_PROCESS.test(source) ? own : shared).push(file);
}
const groups = shareOut(shared, SHARED_PROCESSES, lastDurations());

/**
 * Each file's time in the last run (scripts/test-durations.mjs writes them where test.mjs says),
 * or null when there was none that finished (a fresh clone).
 */
function lastDurations() {
  try {
    const ms = JSON.parse(readFileSync(DURATIONS, 'utf8'));
    return Object.keys(ms).length > 0 ? ms : null;
  } catch {
    return null;
  }
}

// Longest first, so that no long one starts last: the Chromium process, the files that asked for
// their own process (mostly waiting on child processes and clocks), then the shared processes.
// Node's runner starts the files it is given in the sorted order of their paths, so each process
// is a file `test/processes/NN.test.js` whose number is its place in this order.
const processes = [chromium, ...own.map((file) => [file]), ...groups].filter((files) => files.length > 0);
const PROCESS_DIR = join(TREE, 'test', 'processes');
mkdirSync(PROCESS_DIR);
const width = String(processes.length).length;
const importInSuite = (file) =>
  `describe(${JSON.stringify(file)}, async () => {\n  await import(${JSON.stringify(`../../${file.replace(/\.ts$/, '.js')}`)});\n});\n`;
const list = processes.map((files, i) => {
  const path = join(PROCESS_DIR, `${String(i + 1).padStart(width, '0')}.test.js`);
  writeFileSync(path, `import { describe } from 'node:test';\n${files.map(importInSuite).join('')}`);
  return relative(ROOT, path);
});
writeFileSync(join(TREE, 'test-files.txt'), list.join('\n') + '\n');
