// Preloaded (`node --import`) into a `netdiag` process a test starts, whose clock compose cannot
// be handed from outside: Date reads the machine's time moved by TEST_CLOCK_SHIFT_MS, so a test
// chooses where in a minute its steps fall instead of waiting for the wall clock to get there
// (test/helpers/accounts-cli.ts, clockAtMinuteStart). Time still runs; only its origin moves.
// Timers, performance.now() and process.hrtime() are left alone: they measure durations.
const shift = Number(process.env.TEST_CLOCK_SHIFT_MS ?? 0);
if (!Number.isFinite(shift)) throw new Error(`TEST_CLOCK_SHIFT_MS is not a number: ${process.env.TEST_CLOCK_SHIFT_MS}`);
const RealDate = Date;
const now = () => RealDate.now() + shift;

globalThis.Date = new Proxy(RealDate, {
  // new Date(): the moved now; new Date(anything): that date, as ever.
  construct: (target, args, newTarget) => Reflect.construct(target, args.length === 0 ? [now()] : args, newTarget),
  // Date() called as a function gives the moved now as a string.
  apply: () => new RealDate(now()).toString(),
  get: (target, key, receiver) => (key === 'now' ? now : Reflect.get(target, key, receiver)),
});
