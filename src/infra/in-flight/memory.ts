import type { InFlightSlots } from '../../domain/in-flight.js';

/** Work in flight counted in this process: exact for one instance. */
export class MemoryInFlightSlots implements InFlightSlots {
  readonly #held = new Map<string, number>();

  async tryAcquire(owner: string, max: number): Promise<(() => void) | null> {
    const held = this.#held.get(owner) ?? 0;
    if (held >= max) return null;
    this.#held.set(owner, held + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.#held.get(owner) ?? 0) - 1;
      if (left > 0) this.#held.set(owner, left);
      else this.#held.delete(owner);
    };
  }

  /** Slots `owner` holds in this process. */
  heldBy(owner: string): number {
    return this.#held.get(owner) ?? 0;
  }

  async close(): Promise<void> {}
}
