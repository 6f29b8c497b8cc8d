import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import type { TestContext } from 'node:test';

/** Tests that stop Redis start one of their own (the shared one at TEST_REDIS_URL is never stopped). */
export const hasRedisServer = spawnSync('redis-server', ['--version']).status === 0;

/** A redis-server of the test's own on loopback `port`, without persistence; killed when the test ends. */
export async function startRedisServer(t: TestContext, port: number): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'inherit'] });
  t.after(() => child.kill('SIGKILL'));
  let out = '';
  await new Promise<void>((resolve, reject) => {
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      if (out.includes('Ready to accept connections')) resolve();
    });
    // 'close', not 'exit': by then its output is read, and the error says why it stopped.
    child.once('close', (code) => reject(new Error(`redis-server exited with ${code}: ${out}`)));
  });
  return child;
}
