/**
 * The direction of imports (STYLE.md, "The shape of the house"), checked on every run:
 * src/domain knows nothing of src/infra, src/http or Fastify, nor does src/operations; src/net is
 * pure address code with no I/O; and no module of src/ imports itself back through others
 * (type-only imports count).
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

const files = sources(SRC);
const graph = new Map(files.map((f) => [f, importsOf(f)]));
const name = (f: string): string => relative(ROOT, f).split(sep).join('/');
const under = (f: string, dir: string): boolean => f.startsWith(join(SRC, dir) + sep);
/** The in-repo TypeScript client (@netdiag/client), which the CLI imports by relative path: a package of its own, outside src/. */
const inClient = (f: string): boolean => f.startsWith(join(ROOT, 'clients', 'typescript', 'src') + sep) && existsSync(f);

describe('architecture', () => {
  it('reads the imports of every source file', () => {
    assert.ok(files.length > 100, `only ${files.length} files under src/`);
    const unresolved = [...graph].flatMap(([f, edges]) =>
      edges.filter((e) => e.file !== null && !graph.has(e.file) && !e.spec.endsWith('.json') && !inClient(e.file)).map((e) => `${name(f)} -> ${e.spec}`),
    );
    assert.deepEqual(unresolved, [], 'relative imports that name no .ts file under src/ or of the TypeScript client');
  });

  it('src/domain imports neither src/infra, src/http nor fastify', () => {
    const bad = [...graph]
      .filter(([f]) => under(f, 'domain'))
      .flatMap(([f, edges]) =>
        edges
          .filter((e) => (e.file !== null ? under(e.file, 'infra') || under(e.file, 'http') : /^(@?fastify)(\/|$)/.test(e.spec)))
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
