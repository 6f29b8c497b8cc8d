// A reporter `npm test` (scripts/test.mjs) runs beside the usual one: each test file's time in the
// run (its suite, which scripts/test-tree.mjs names by its path), as one JSON object written at
// the end, for the next run's test-tree.mjs to share the files out between processes evenly.
// Plain JavaScript, run with no loader.
export default async function* testDurations(source) {
  const ms = {};
  for await (const event of source) {
    if ((event.type === 'test:pass' || event.type === 'test:fail') && event.data.nesting === 0 && event.data.name.endsWith('.test.ts')) {
      ms[event.data.name] = Math.round(event.data.details.duration_ms);
    }
  }
  yield `${JSON.stringify(ms)}\n`;
}
