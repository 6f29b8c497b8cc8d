// `npm install`'s prepare step: builds clients/typescript/dist, so `npm install ./clients/typescript`
// (or a path to it) gives a client that imports at once. Without TypeScript (an install with
// --omit=dev, which needs no client) it says so and leaves the install alone.
// Plain JavaScript, run with no loader.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
if (!existsSync(tsc)) {
  console.log('@netdiag/client not built (TypeScript is not installed); run `npm run build` in clients/typescript to use it.');
} else {
  const { status } = spawnSync(process.execPath, [tsc, '-p', join(root, 'clients', 'typescript', 'tsconfig.json')], { stdio: 'inherit' });
  process.exitCode = status ?? 1;
}
