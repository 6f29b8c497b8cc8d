/**
 * Runs `fn` over `items` with at most `limit` calls in flight; results keep the input order.
 * The bulk endpoints (IP, DNS, proxy) all answer "N items, about as fast as the slowest one,
 * without N unbounded sockets", which is this.
 */
export async function mapConcurrent<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, limit), items.length) }, worker));
  return results;
}
