import type { CliIo } from './io.js';

/**
 * A job's progress on stderr: on a terminal a bar redrawn in place, with the items printed above
 * it as they complete; otherwise plain lines, at each tenth of the work and for each item shown.
 */
const BAR_WIDTH = 30;

export class Progress {
  #done = 0;
  #tenth = 0;
  #drawn = false;

  constructor(
    private readonly io: Pick<CliIo, 'stderr' | 'stderrIsTTY'>,
    private readonly total: number,
  ) {
    if (io.stderrIsTTY) this.#draw();
  }

  /** One item completed; `print` writes its line (null: an item not shown) above the bar. */
  item(line: string | null, print: () => void): void {
    this.#done++;
    if (this.io.stderrIsTTY) {
      if (line !== null) {
        this.#clear();
        print();
      }
      this.#draw();
      return;
    }
    if (line !== null) print();
    const tenth = this.total > 0 ? Math.floor((this.#done * 10) / this.total) : 0;
    if (tenth > this.#tenth) {
      this.#tenth = tenth;
      this.io.stderr(`netdiag: ${this.#done}/${this.total} done\n`);
    }
  }

  /** The job has finished: the bar gives way to the result. */
  done(): void {
    this.#clear();
  }

  #draw(): void {
    const total = Math.max(this.total, this.#done);
    const filled = total > 0 ? Math.round((this.#done / total) * BAR_WIDTH) : 0;
    this.io.stderr(`\r[${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}] ${this.#done}/${total}`);
    this.#drawn = true;
  }

  #clear(): void {
    if (this.#drawn) this.io.stderr('\r\x1b[K');
    this.#drawn = false;
  }
}
