import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { check, type Diagnostics } from 'recheck';
import ts from 'typescript';

/**
 * Issue 14, "Safe to expose": no regular expression in src/ may take more than linear time in
 * its input, because many of them read what a peer sent (WHOIS answers, judge echoes relayed by
 * proxies, DNS answers, HTTP headers). V8's engine backtracks, so a regex with adjacent or nested
 * unbounded quantifiers over the same characters (`\s*%*\s*`, `[a:]*:[a:]*`) is quadratic or worse
 * on input a peer can choose.
 *
 * Every regex is found with the TypeScript compiler (every RegularExpressionLiteral node, every
 * `new RegExp(...)` / `RegExp(...)` and every string handed to match/matchAll/search, which turn
 * it into a regex), and recheck's automaton checker (never its fuzzer: not finding an attack is
 * no proof) must prove each one linear: complexity `constant` or `linear`, or `safe` from the
 * automaton checker itself, which it reports for a pattern with no unbounded repetition at all
 * (each attempt then reads a bounded number of characters). A `RegExp` built from something the
 * test cannot evaluate statically fails the test, unless DYNAMIC says where its sources come
 * from so they are checked too.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SRC = join(ROOT, 'src');

/**
 * Regexes recheck cannot prove linear that are safe for another reason, keyed "file: /source/flags".
 * Each entry says why. Prefer rewriting to adding here.
 */
const ALLOWED: ReadonlyMap<string, string> = new Map([]);

/**
 * `new RegExp(x)` whose x is data, not code: the file's name -> why, and the sources it builds
 * (checked like the literals).
 */
const DYNAMIC: ReadonlyMap<string, { why: string; sources: () => Array<{ source: string; flags: string }> }> = new Map([
  [
    'src/domain/ip/hosting.ts',
    {
      why: 'hosting keywords come from the shipped data/hosting-asns.json (or the operator\'s own file) and are matched against AS organisation names from the local GeoIP database, never against peer text',
      sources: () => {
        const data = JSON.parse(readFileSync(join(SRC, 'domain/ip/data/hosting-asns.json'), 'utf8')) as { keywords: string[] };
        return data.keywords.map((k) => ({ source: k, flags: 'i' }));
      },
    },
  ],
]);

/** Complexities that count as proven. */
const PROVEN: ReadonlySet<string> = new Set(['constant', 'linear']);

/** Per-regex budget for recheck (its own default is 10 s); a timeout is a failure, not a pass. */
const CHECK_TIMEOUT_MS = 30_000;

/** Methods of String.prototype that compile a string argument into a RegExp. */
const STRING_TO_REGEX = new Set(['match', 'matchAll', 'search']);

interface Found {
  file: string;
  line: number;
  source: string;
  flags: string;
}

function tsFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...tsFiles(path));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/** The string an expression always evaluates to, or null when it cannot be known statically. */
function constantString(node: ts.Expression, file: ts.SourceFile, depth = 0): string | null {
  if (depth > 20) return null;
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  if (ts.isParenthesizedExpression(node)) return constantString(node.expression, file, depth + 1);
  if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.PlusToken) {
    const l = constantString(node.left, file, depth + 1);
    const r = constantString(node.right, file, depth + 1);
    return l === null || r === null ? null : l + r;
  }
  if (ts.isTemplateExpression(node)) return template(node, false, file, depth);
  if (ts.isTaggedTemplateExpression(node) && node.tag.getText(file) === 'String.raw') {
    const tpl = node.template;
    if (ts.isNoSubstitutionTemplateLiteral(tpl)) return tpl.rawText ?? null;
    return template(tpl, true, file, depth);
  }
  if (ts.isIdentifier(node)) {
    const init = constInitializer(node.text, file);
    return init === null ? null : constantString(init, file, depth + 1);
  }
  return null;
}

function template(node: ts.TemplateExpression, raw: boolean, file: ts.SourceFile, depth: number): string | null {
  let out = raw ? (node.head.rawText ?? null) : node.head.text;
  if (out === null) return null;
  for (const span of node.templateSpans) {
    const value = constantString(span.expression, file, depth + 1);
    const lit = raw ? span.literal.rawText : span.literal.text;
    if (value === null || lit === undefined) return null;
    out += value + lit;
  }
  return out;
}

/** The initializer of a top-level `const name = ...` in the file, or null. */
function constInitializer(name: string, file: ts.SourceFile): ts.Expression | null {
  for (const stmt of file.statements) {
    if (!ts.isVariableStatement(stmt) || !(stmt.declarationList.flags & ts.NodeFlags.Const)) continue;
    for (const decl of stmt.declarationList.declarations) {
      if (ts.isIdentifier(decl.name) && decl.name.text === name && decl.initializer) return decl.initializer;
    }
  }
  return null;
}

function regexesIn(path: string): { found: Found[]; unresolved: string[] } {
  const text = readFileSync(path, 'utf8');
  const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const rel = relative(ROOT, path);
  const found: Found[] = [];
  const unresolved: string[] = [];
  const where = (node: ts.Node): number => file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1;
  const visit = (node: ts.Node): void => {
    if (node.kind === ts.SyntaxKind.RegularExpressionLiteral) {
      const literal = node.getText(file);
      const slash = literal.lastIndexOf('/');
      found.push({ file: rel, line: where(node), source: literal.slice(1, slash), flags: literal.slice(slash + 1) });
    } else if ((ts.isNewExpression(node) || ts.isCallExpression(node)) && ts.isIdentifier(node.expression) && node.expression.text === 'RegExp') {
      const [sourceArg, flagsArg] = node.arguments ?? [];
      const source = sourceArg ? constantString(sourceArg, file) : '';
      const flags = flagsArg ? constantString(flagsArg, file) : '';
      if (source === null || flags === null) {
        const dynamic = DYNAMIC.get(rel);
        if (dynamic) found.push(...dynamic.sources().map((s) => ({ file: rel, line: where(node), ...s })));
        else unresolved.push(`${rel}:${where(node)} ${node.getText(file)}`);
      } else {
        found.push({ file: rel, line: where(node), source, flags });
      }
    } else if (
      ts.isCallExpression(node) &&
      ts.isPropertyAccessExpression(node.expression) &&
      STRING_TO_REGEX.has(node.expression.name.text) &&
      node.arguments.length > 0 &&
      (ts.isStringLiteral(node.arguments[0]!) || ts.isNoSubstitutionTemplateLiteral(node.arguments[0]!))
    ) {
      const source = constantString(node.arguments[0]!, file)!;
      found.push({ file: rel, line: where(node), source, flags: node.expression.name.text === 'matchAll' ? 'g' : '' });
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return { found, unresolved };
}

/** Proven linear: see the comment at the top. */
function proven(d: Diagnostics): boolean {
  if (d.status !== 'safe') return false;
  return PROVEN.has(d.complexity.type) || (d.complexity.type === 'safe' && d.checker === 'automaton' && !d.complexity.isFuzz);
}

function describe(d: Diagnostics): string {
  switch (d.status) {
    case 'safe':
      return `only ${d.complexity.summary} (${d.checker}): not a proof`;
    case 'vulnerable':
      return `${d.complexity.summary}, attack ${JSON.stringify(d.attack.pattern)}`;
    case 'unknown':
      return `unknown (${d.error.kind}${'message' in d.error ? `: ${d.error.message}` : ''})`;
  }
}

const files = tsFiles(SRC);
const all = files.map(regexesIn);
const found = all.flatMap((r) => r.found);
const unresolved = all.flatMap((r) => r.unresolved);

test('the extractor sees the regexes of src/ (literals, RegExp(...) and strings given to match)', () => {
  assert.ok(files.length > 50, `${files.length} files under src/`);
  assert.ok(found.length > 50, `${found.length} regexes found`);
  // A sample of each kind, so a broken walk cannot pass by finding nothing.
  assert.ok(found.some((f) => f.file.endsWith('whois/parser.ts')), 'regex literals of the WHOIS parser');
  assert.ok(found.some((f) => f.file.endsWith('whois/dates.ts') && f.flags === 'i' && f.source.includes('(\\d{4})')), 'new RegExp(String.raw`...` + TIME) of dates.ts');
});

test('no RegExp is built from text the test cannot evaluate', () => {
  assert.deepEqual(unresolved, [], 'build these from literals or top-level const strings so they can be checked');
});

test('every regex in src/ is proven linear (or allow-listed with a reason)', { timeout: 10 * 60_000 }, async () => {
  const failures: string[] = [];
  const allowedSeen = new Set<string>();
  // Identical (source, flags) pairs are checked once.
  const verdicts = new Map<string, Promise<Diagnostics>>();
  for (const f of found) {
    const key = `/${f.source}/${f.flags}`;
    if (!verdicts.has(key)) verdicts.set(key, check(f.source, f.flags, { checker: 'automaton', timeout: CHECK_TIMEOUT_MS }));
  }
  for (const f of found) {
    const key = `/${f.source}/${f.flags}`;
    const d = await verdicts.get(key)!;
    const allowKey = `${f.file}: ${key}`;
    if (ALLOWED.has(allowKey)) {
      allowedSeen.add(allowKey);
      continue;
    }
    if (!proven(d)) failures.push(`${f.file}:${f.line} ${key} — ${describe(d)}`);
  }
  const stale = [...ALLOWED.keys()].filter((k) => !allowedSeen.has(k));
  assert.deepEqual(stale, [], 'allow-list entries that match no regex any more');
  assert.deepEqual(failures, [], `${failures.length} of ${found.length} regexes are not proven linear`);
});
