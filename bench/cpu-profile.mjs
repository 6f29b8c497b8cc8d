import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';

/**
 * `NODE_OPTIONS="--import <this file>" CPU_PROF_DIR=<dir>`: profiles the process from its start
 * to process.exit() and writes <dir>/<pid>.cpuprofile (open it in Chrome DevTools). For servers
 * started by bench/lib.ts, whose flags are fixed: --cpu-prof is not allowed in NODE_OPTIONS, and
 * this is plain JavaScript because NODE_OPTIONS imports load before tsx.
 */
const dir = process.env.CPU_PROF_DIR;
if (dir) {
  const session = new Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: 200 });
  session.post('Profiler.start');
  const exit = process.exit.bind(process);
  process.exit = (code) => {
    // The in-thread session answers synchronously, so the profile is written before the exit.
    session.post('Profiler.stop', (err, result) => {
      if (!err) writeFileSync(join(dir, `${process.pid}.cpuprofile`), JSON.stringify(result.profile));
    });
    return exit(code);
  };
}
