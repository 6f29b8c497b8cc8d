import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';

/**
 * How long this process's own work held its event loop: the most CPU time its main thread spent
 * between two looks of a 1 ms timer (one turn of the loop when it is busy), in ms.
 *
 * Not the timer's wall-clock lateness (monitorEventLoopDelay): on a machine busy with other
 * processes the scheduler also pauses the loop (with a load of 15 on 2 cores a 3 ms burst of work
 * took 30 ms of wall time), which says nothing about what the code does with its input and made a
 * "no stall" assertion a load test. The main thread's CPU time comes from Linux's
 * /proc/<pid>/task/<pid>/schedstat (nanoseconds on the CPU); worker threads (the RDAP decoder)
 * are not counted, as they do not hold the loop. Where that file is missing, it falls back to the
 * timer's lateness.
 */
export interface LoopHoldMeter {
  /** Stops measuring; the longest hold seen, in ms. */
  stop(): number;
}

const SCHEDSTAT = `/proc/${process.pid}/task/${process.pid}/schedstat`;
const TICK_MS = 1;

/** The main thread's CPU time so far in ns, or null where the kernel does not tell. */
function mainThreadCpuNs(): number | null {
  try {
    const ns = Number(readFileSync(SCHEDSTAT, 'latin1').split(' ')[0]);
    return Number.isFinite(ns) ? ns : null;
  } catch {
    return null;
  }
}

export const loopHoldByCpu = mainThreadCpuNs() !== null;

export function measureLoopHold(): LoopHoldMeter {
  if (!loopHoldByCpu) {
    const h = monitorEventLoopDelay({ resolution: TICK_MS });
    h.enable();
    return {
      stop() {
        h.disable();
        return h.max / 1e6;
      },
    };
  }
  let last = mainThreadCpuNs()!;
  let max = 0;
  const look = (): void => {
    const now = mainThreadCpuNs()!;
    max = Math.max(max, now - last);
    last = now;
  };
  let timer = setTimeout(function tick() {
    look();
    timer = setTimeout(tick, TICK_MS);
  }, TICK_MS);
  return {
    stop() {
      clearTimeout(timer);
      look();
      return max / 1e6;
    },
  };
}
