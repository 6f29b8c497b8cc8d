/** What curl says about a URL on loopback, to compare the HTTP check with (no proxy, at most 10 redirects). */
import { execFile } from 'node:child_process';

export interface CurlChain {
  /** The status of every answer, in order (`curl -sIL` prints each head). */
  statuses: number[];
  effectiveUrl: string;
  redirects: number;
  exitCode: number;
}

function curl(args: string[]): Promise<{ stdout: string; code: number }> {
  return new Promise((resolve, reject) => {
    execFile('curl', ['--noproxy', '*', '--max-redirs', '10', ...args], (err, stdout) => {
      if (err && typeof err.code !== 'number') return reject(err);
      resolve({ stdout, code: err ? Number(err.code) : 0 });
    });
  });
}

export async function curlChain(url: string, head: boolean): Promise<CurlChain> {
  // -D - prints every head whatever the method; the body goes nowhere.
  const { stdout, code } = await curl(['-sL', ...(head ? ['-I'] : []), '-D', '-', '-o', '/dev/null', '-w', '\\n%{url_effective} %{num_redirects}', url]);
  const statuses = [...stdout.matchAll(/^HTTP\/[\d.]+ (\d{3})/gm)].map((m) => Number(m[1]));
  const last = stdout.trim().split('\n').at(-1)!.split(' ');
  return { statuses, effectiveUrl: last[0]!, redirects: Number(last[1]), exitCode: code };
}
