/**
 * Runs shutdown steps one after the other, each even when one before it failed, so that a step
 * that fails (a queue that cannot close) leaves nothing after it open (the store). Once all have
 * run: the one failure, rethrown as it was, or an AggregateError holding every failure in order.
 */
export async function closeInOrder(steps: ReadonlyArray<() => Promise<unknown> | unknown>): Promise<void> {
  const failures: unknown[] = [];
  for (const step of steps) {
    try {
      await step();
    } catch (err) {
      failures.push(err);
    }
  }
  if (failures.length === 1) throw failures[0];
  if (failures.length > 1) throw new AggregateError(failures, `${failures.length} shutdown steps failed`);
}
