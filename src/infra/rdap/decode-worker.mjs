// The RDAP decoder's worker thread. Worker threads do not inherit the tsx hooks that
// bin/netdiag.js registers on the main thread, so this entry registers them, then loads the
// TypeScript (registering twice, as under `node --import tsx`, is harmless).
import { register } from 'tsx/esm/api';

register();
await import('./decode-worker.ts');
