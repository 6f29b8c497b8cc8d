/** Inside the worker thread: each message is one answer's bytes, each reply its decoded fields. */
import { parentPort } from 'node:worker_threads';
import { decodeAnswer, type AnswerKind } from '../../domain/rdap/decode.js';

parentPort?.on('message', (message: { id: number; body: Uint8Array; kind: AnswerKind }) => {
  try {
    parentPort!.postMessage({ id: message.id, answer: decodeAnswer(message.body, message.kind) });
  } catch (err) {
    parentPort!.postMessage({ id: message.id, error: err instanceof Error ? err.message : String(err) });
  }
});
