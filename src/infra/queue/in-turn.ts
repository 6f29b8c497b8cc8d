/** A claimable item of an account's, as the store's look gives them: round-robin between accounts. */
export interface Turn {
  id: string;
  account_id: number;
}

/**
 * The queues' fairness rule, in one place: candidates are taken in the order of the store's look
 * (round-robin between accounts, JobRepository.claimable), and an account found at its
 * work-in-flight limit has its later candidates passed over in this look (asking again costs a
 * read for each, and the answer would be the same).
 *
 * `take` answers the candidate claimed, null when its account is at its limit, or undefined when
 * another claimer was first (or it is no longer claimable); each one claimed goes to `taken`.
 * Stops once `room()` is false. `skip` passes over candidates without asking (running here
 * already). True when candidates were left behind (no room, or an account at its limit).
 */
export async function takeInTurn<C extends Turn, T>(
  candidates: readonly C[],
  o: { room: () => boolean; skip: (c: C) => boolean; take: (c: C) => Promise<T | null | undefined>; taken: (t: T) => void },
): Promise<boolean> {
  const full = new Set<number>();
  let leftBehind = false;
  for (const c of candidates) {
    if (!o.room()) return true;
    if (o.skip(c)) continue;
    if (full.has(c.account_id)) {
      leftBehind = true;
      continue;
    }
    const t = await o.take(c);
    if (t === null) {
      full.add(c.account_id);
      leftBehind = true;
    } else if (t !== undefined) {
      o.taken(t);
    }
  }
  return leftBehind;
}
