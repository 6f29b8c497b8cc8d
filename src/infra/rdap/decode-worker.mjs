// The RDAP decoder's worker thread. Worker threads do not inherit the tsx hooks that
// bin/netdiag.js registers on the main thread: like bin/netdiag.js, this entry runs the compiled
// JavaScript when it sits beside the sources (the tree `npm test` compiles, scripts/test-tree.mjs),
// else registers tsx and loads the TypeScript (registering twice, as under `node --import tsx`,
// is harmless).
import { existsSync } from 'node:fs';

const compiled = new URL('./decode-worker.js', import.meta.url);
if (existsSync(compiled)) {
  await import(compiled.href);
} else {
  (await import('tsx/esm/api')).register();
  await import('./decode-worker.ts');
}
