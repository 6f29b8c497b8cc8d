import { existsSync } from 'node:fs';

/**
 * How a child `node` runs a TypeScript script: its compiled JavaScript when the tests run
 * compiled (`npm test` compiles the tree once, scripts/test-tree.mjs), else the source through
 * tsx (a test file run by hand). `node ...loader [flags] file`.
 */
export function runnable(script: string): { loader: string[]; file: string } {
  // Already JavaScript: a module of the compiled tree naming itself (import.meta.url).
  if (script.endsWith('.js')) return { loader: [], file: script };
  const compiled = script.replace(/\.ts$/, '.js');
  return existsSync(compiled) ? { loader: [], file: compiled } : { loader: ['--import', 'tsx'], file: script };
}
