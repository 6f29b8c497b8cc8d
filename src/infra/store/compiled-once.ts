import { CompiledQuery, type Compilable, type QueryResult } from 'kysely';

/** What runs a compiled query: a Kysely instance or a transaction. */
type Executor = { executeQuery(query: CompiledQuery): Promise<QueryResult<unknown>> };

/**
 * A statement written with Kysely for one row, built and compiled once: `run(q, row)` executes
 * it with the row's values, without Kysely's building and compiling on every call (~20 µs for
 * an upsert, more than SQLite takes to run it); on SQLite the statement is also prepared once
 * (see preparedOnce in sqlite.ts). `build` must take every value of the row as a parameter.
 */
export function compiledOnce<R extends object>(build: (row: R) => Compilable, columns: ReadonlyArray<keyof R>) {
  // Each column's value is a marker while compiling, which finds its parameter's position.
  const markers = columns.map((_, i) => `\u0000compiled-once-${i}`);
  const compiled = build(Object.fromEntries(columns.map((c, i) => [c, markers[i]])) as R).compile();
  const order = compiled.parameters.map((p) => {
    const i = markers.indexOf(p as string);
    if (i < 0) throw new Error(`compiledOnce: a parameter of "${compiled.sql}" is not a row value`);
    return columns[i]!;
  });
  return (q: Executor, row: R): Promise<QueryResult<unknown>> => q.executeQuery(CompiledQuery.raw(compiled.sql, order.map((c) => row[c])));
}
