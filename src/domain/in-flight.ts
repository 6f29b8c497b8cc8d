/**
 * Work in flight per owner (an account): how many of its probing requests run at once, counted
 * in this process or, with Redis, across every instance that shares it.
 */
export interface InFlightSlots {
  /**
   * Takes one of `owner`'s `max` slots: a release function (safe to call more than once), or
   * null when the owner holds all of them.
   */
  tryAcquire(owner: string, max: number): Promise<(() => void) | null>;
  close(): Promise<void>;
}
