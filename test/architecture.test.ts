/**
 * The direction of imports (STYLE.md, "The shape of the house"; docs/architecture.md, "Which way
 * imports point"), checked on every run:
 * - src/domain knows nothing of src/infra, src/http, Fastify or src/config.ts;
 * - src/http loads nothing of src/infra (type-only imports allowed): src/compose.ts hands it what
 *   it needs;
 * - src/operations imports neither src/http, src/infra nor Fastify;
 * - `netdiag worker` (src/worker.ts) loads neither src/server.ts, src/app.ts nor any of src/http
 *   and Fastify, but for the metrics listener it loads when NETDIAG_METRICS_PORT asks for it;
 * - src/net is pure address code with no I/O;
 * - no module of src/ imports itself back through others (type-only imports count).
 * ESLint's no-restricted-imports (eslint.config.js) says the same of each file's own imports;
 * only this test follows them transitively.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SRC = join(ROOT, 'src');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return sources(p);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [p] : [];
  });
}

interface Edge {
  /** The specifier as written. */
  spec: string;
  /** The file it names, for a relative specifier (.js read as .ts). */
  file: string | null;
}

/** Every specifier of a file: static imports and re-exports (type-only too), side-effect and dynamic imports. */
function importsOf(file: string): Edge[] {
  const found = ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles;
  return found.map(({ fileName: spec }) => {
    if (!spec.startsWith('.')) return { spec, file: null };
    const target = resolve(dirname(file), spec);
    return { spec, file: target.endsWith('.js') ? target.slice(0, -3) + '.ts' : target };
  });
}

/** A specifier that is loaded when the file runs: `dynamic` for `import()`. */
interface RuntimeEdge extends Edge {
  dynamic: boolean;
}

/**
 * The specifiers a file loads when it runs: every import and re-export but `import type` and
 * `export type` (with verbatimModuleSyntax, `import { type A } from 'x'` still loads x), and
 * every `import('x')` with a literal specifier.
 */
function runtimeImportsOf(file: string): RuntimeEdge[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: Array<{ spec: string; dynamic: boolean }> = [];
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && !node.importClause?.isTypeOnly && ts.isStringLiteral(node.moduleSpecifier)) found.push({ spec: node.moduleSpecifier.text, dynamic: false });
    else if (ts.isExportDeclaration(node) && !node.isTypeOnly && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) found.push({ spec: node.moduleSpecifier.text, dynamic: false });
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments[0] && ts.isStringLiteralLike(node.arguments[0])) found.push({ spec: node.arguments[0].text, dynamic: true });
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found.map(({ spec, dynamic }) => {
    if (!spec.startsWith('.')) return { spec, file: null, dynamic };
    const target = resolve(dirname(file), spec);
    return { spec, file: target.endsWith('.js') ? target.slice(0, -3) + '.ts' : target, dynamic };
  });
}

const files = sources(SRC);
const graph = new Map(files.map((f) => [f, importsOf(f)]));
const name = (f: string): string => relative(ROOT, f).split(sep).join('/');
const under = (f: string, dir: string): boolean => f.startsWith(join(SRC, dir) + sep);
/** The in-repo TypeScript client (@netdiag/client), which the CLI imports by relative path: a package of its own, outside src/. */
const inClient = (f: string): boolean => f.startsWith(join(ROOT, 'clients', 'typescript', 'src') + sep) && existsSync(f);
const runtime = new Map(files.map((f) => [f, runtimeImportsOf(f)]));
const CONFIG = join(SRC, 'config.ts');
const FASTIFY = /^(fastify|@fastify\/[^/]+)(\/|$)/;

/** What `netdiag worker` may load of src/http: the listener of its own GET /metrics, imported only when NETDIAG_METRICS_PORT is set. */
const WORKER = join(SRC, 'worker.ts');
const METRICS_LISTENER = join(SRC, 'http', 'metrics-listener.ts');

/**
 * Every file of src/ and every package `from` loads when it runs, each with the chain of imports
 * that reaches it (static and dynamic). `follow` says whether an edge is walked.
 */
function loadedBy(from: string, follow: (from: string, edge: RuntimeEdge) => boolean = () => true): { files: Map<string, string[]>; packages: Map<string, string[]> } {
  const reached = new Map<string, string[]>([[from, [name(from)]]]);
  const packages = new Map<string, string[]>();
  const queue = [from];
  while (queue.length > 0) {
    const f = queue.shift()!;
    const chain = reached.get(f)!;
    for (const edge of runtime.get(f) ?? []) {
      if (!follow(f, edge)) continue;
      if (edge.file === null) {
        if (!packages.has(edge.spec)) packages.set(edge.spec, [...chain, edge.spec]);
      } else if (graph.has(edge.file) && !reached.has(edge.file)) {
        reached.set(edge.file, [...chain, name(edge.file)]);
        queue.push(edge.file);
      }
    }
  }
  return { files: reached, packages };
}

/** The worker's own graph: everything it loads but the metrics listener (and what only the listener loads). */
const notTheListener = (from: string, edge: RuntimeEdge): boolean => !(from === WORKER && edge.file === METRICS_LISTENER && edge.dynamic);

describe('architecture', () => {
  it('reads the imports of every source file', () => {
    assert.ok(files.length > 100, `only ${files.length} files under src/`);
    const unresolved = [...graph].flatMap(([f, edges]) =>
      edges.filter((e) => e.file !== null && !graph.has(e.file) && !e.spec.endsWith('.json') && !inClient(e.file)).map((e) => `${name(f)} -> ${e.spec}`),
    );
    assert.deepEqual(unresolved, [], 'relative imports that name no .ts file under src/ or of the TypeScript client');
  });

  it('src/domain imports neither src/infra, src/http, fastify nor src/config.ts', () => {
    const bad = [...graph]
      .filter(([f]) => under(f, 'domain'))
      .flatMap(([f, edges]) =>
        edges
          .filter((e) => (e.file !== null ? under(e.file, 'infra') || under(e.file, 'http') || e.file === CONFIG : /^(@?fastify)(\/|$)/.test(e.spec)))
          .map((e) => `${name(f)} -> ${e.spec}`),
      );
    assert.deepEqual(bad, []);
  });

  it('src/operations imports neither src/infra, src/http nor fastify', () => {
    const bad = [...graph]
      .filter(([f]) => under(f, 'operations'))
      .flatMap(([f, edges]) =>
        edges
          .filter((e) => (e.file !== null ? under(e.file, 'infra') || under(e.file, 'http') : /^(@?fastify)(\/|$)/.test(e.spec)))
          .map((e) => `${name(f)} -> ${e.spec}`),
      );
    assert.deepEqual(bad, []);
  });

  it('src/http loads nothing of src/infra (type-only imports allowed: compose.ts hands it what it needs)', () => {
    const bad = [...runtime]
      .filter(([f]) => under(f, 'http'))
      .flatMap(([f, edges]) => edges.filter((e) => e.file !== null && under(e.file, 'infra')).map((e) => `${name(f)} -> ${e.spec}`));
    assert.deepEqual(bad, []);
  });

  it('netdiag worker loads neither src/server.ts, src/app.ts, src/http nor Fastify, but for its metrics listener', () => {
    const loaded = loadedBy(WORKER, notTheListener);
    const bad = [...loaded.files]
      .filter(([f]) => f === join(SRC, 'server.ts') || f === join(SRC, 'app.ts') || under(f, 'http'))
      .map(([, chain]) => chain.join(' -> '));
    const fastify = [...loaded.packages].filter(([spec]) => FASTIFY.test(spec)).map(([, chain]) => chain.join(' -> '));
    assert.deepEqual([...bad, ...fastify], []);
    // The listener is imported where the worker starts it, and nowhere else on the worker's way.
    const listener = [...loadedBy(WORKER).files].filter(([f]) => f === METRICS_LISTENER).map(([, chain]) => chain.join(' -> '));
    assert.deepEqual(listener, ['src/worker.ts -> src/http/metrics-listener.ts']);
    assert.ok(runtime.get(WORKER)!.some((e) => e.file === METRICS_LISTENER && e.dynamic), 'src/worker.ts imports the metrics listener with import(), when NETDIAG_METRICS_PORT is set');
  });

  it('no file of src/domain names an infra path, in code or in prose (`grep -rn "infra/" src/domain` prints nothing)', () => {
    const naming = files.filter((f) => under(f, 'domain') && readFileSync(f, 'utf8').includes('infra/')).map(name);
    assert.deepEqual(naming, [], 'the domain says "the infra layer", not where it lives');
  });

  it('src/net does no I/O and depends on no layer', () => {
    const io = /^(node:)?(net|dns|fs|fs\/promises|http|https|http2|tls|dgram|child_process|worker_threads|cluster|readline|inspector)$/;
    const bad = [...graph]
      .filter(([f]) => under(f, 'net'))
      .flatMap(([f, edges]) =>
        edges
          .filter((e) => (e.file !== null ? ['infra', 'domain', 'http'].some((d) => under(e.file!, d)) : io.test(e.spec) || /^(@?fastify|ioredis|pg|better-sqlite3|kysely|bullmq|undici)(\/|$)/.test(e.spec)))
          .map((e) => `${name(f)} -> ${e.spec}`),
      );
    assert.deepEqual(bad, []);
  });

  it('the import graph of src/ has no cycle', () => {
    // Depth-first search; a back edge to a file on the stack is a cycle, reported in order.
    const state = new Map<string, 'open' | 'done'>();
    const stack: string[] = [];
    const cycles: string[] = [];
    const visit = (f: string): void => {
      state.set(f, 'open');
      stack.push(f);
      for (const { file } of graph.get(f) ?? []) {
        if (file === null || !graph.has(file)) continue;
        const s = state.get(file);
        if (s === 'open') cycles.push([...stack.slice(stack.indexOf(file)), file].map(name).join(' -> '));
        else if (s === undefined) visit(file);
      }
      stack.pop();
      state.set(f, 'done');
    };
    for (const f of [...graph.keys()].sort()) if (!state.has(f)) visit(f);
    assert.deepEqual(cycles, [], `import cycles:\n${cycles.join('\n')}`);
  });
});
