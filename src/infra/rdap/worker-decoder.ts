import { Worker } from 'node:worker_threads';
import { decodeAnswer, type AnswerKind, type DecodedAnswer, type RdapDecoder } from '../../domain/rdap/decode.js';

/** Answers up to this size are decoded in line: well under a millisecond, less than the trip to the thread. */
export const INLINE_DECODE_MAX_BYTES = 16 * 1024;

const ENTRY = new URL('./decode-worker.mjs', import.meta.url);

interface Pending {
  resolve: (answer: DecodedAnswer) => void;
  reject: (err: unknown) => void;
}

/**
 * RDAP answers decoded in one worker thread (started on first use, unref'd while idle, restarted
 * if it dies): JSON.parse of a megabyte someone else wrote takes tens of milliseconds on a busy
 * machine, which the event loop every account shares must never wait for. The bytes are copied
 * and transferred; only the few fields read come back. Answers are taken one after another, each bounded by
 * the 1 MiB cap, so none waits behind more than the ones ahead of it.
 */
export class WorkerRdapDecoder implements RdapDecoder {
  #worker: Worker | null = null;
  readonly #pending = new Map<number, Pending>();
  #next = 1;

  decode(body: Uint8Array, kind: AnswerKind, signal?: AbortSignal): Promise<DecodedAnswer> {
    if (body.length <= INLINE_DECODE_MAX_BYTES) return Promise.resolve(decodeAnswer(body, kind));
    signal?.throwIfAborted();
    const worker = this.#start();
    const id = this.#next++;
    // Transferred, not cloned: the body's own ArrayBuffer when it has one to itself (Buffer.concat's
    // of a large answer does), else a copy (a pooled Buffer's must never be detached).
    const owned = body.byteOffset === 0 && body.byteLength === body.buffer.byteLength && body.buffer instanceof ArrayBuffer;
    const copy = owned ? body : new Uint8Array(body);
    return new Promise<DecodedAnswer>((resolve, reject) => {
      const onAbort = (): void => {
        if (this.#pending.delete(id)) this.#idle();
        reject(signal?.reason);
      };
      this.#pending.set(id, {
        resolve: (answer) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(answer);
        },
        reject: (err) => {
          signal?.removeEventListener('abort', onAbort);
          reject(err);
        },
      });
      signal?.addEventListener('abort', onAbort, { once: true });
      worker.ref();
      worker.postMessage({ id, body: copy, kind }, [copy.buffer as ArrayBuffer]);
    });
  }

  /** Ends the thread (shutdown); answers in flight are rejected. */
  async close(): Promise<void> {
    const worker = this.#worker;
    this.#worker = null;
    this.#failAll(new Error('the RDAP decoder was closed'));
    if (worker) await worker.terminate();
  }

  #start(): Worker {
    if (this.#worker) return this.#worker;
    const worker = new Worker(ENTRY);
    worker.on('message', (message: { id: number; answer?: DecodedAnswer; error?: string }) => {
      const pending = this.#pending.get(message.id);
      if (!pending) return;
      this.#pending.delete(message.id);
      if (message.answer) pending.resolve(message.answer);
      else pending.reject(new Error(message.error ?? 'the RDAP decoder failed'));
      this.#idle();
    });
    const lost = (err: unknown): void => {
      if (this.#worker === worker) this.#worker = null;
      this.#failAll(err instanceof Error ? err : new Error(`the RDAP decoder thread exited (${String(err)})`));
    };
    worker.on('error', lost);
    worker.on('exit', (code) => lost(code));
    worker.unref();
    this.#worker = worker;
    return worker;
  }

  #idle(): void {
    if (this.#pending.size === 0) this.#worker?.unref();
  }

  #failAll(err: Error): void {
    const all = [...this.#pending.values()];
    this.#pending.clear();
    for (const p of all) p.reject(err);
  }
}
