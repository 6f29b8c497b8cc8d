import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.js';

/** Where Debian puts the PostgreSQL server binaries, one directory per major version. */
const PG_LIB = '/usr/lib/postgresql';
/** The system user PostgreSQL runs as: it refuses to run as root. */
const PG_USER = 'postgres';

/** pg_ctl of the newest installed PostgreSQL, or why there is none. */
export function findPgCtl(): { pgCtl: string } | { missing: string } {
  if (!existsSync(PG_LIB)) return { missing: `no PostgreSQL server binaries under ${PG_LIB}` };
  const versions = readdirSync(PG_LIB)
    .filter((v) => existsSync(join(PG_LIB, v, 'bin', 'pg_ctl')))
    .sort((a, b) => Number(b) - Number(a));
  if (versions.length === 0) return { missing: `no pg_ctl under ${PG_LIB}/*/bin` };
  try {
    execFileSync('id', ['-u', PG_USER], { stdio: 'ignore' });
  } catch {
    return { missing: `no "${PG_USER}" system user to run PostgreSQL as` };
  }
  return { pgCtl: join(PG_LIB, versions[0]!, 'bin', 'pg_ctl') };
}

/**
 * A PostgreSQL cluster of the test's own, in a temporary directory on a free loopback port, that
 * the test may stop and start at will (the shared test database is never stopped).
 */
export class PrivateCluster {
  private forget = () => {};

  private constructor(
    private readonly pgCtl: string,
    private readonly dir: string,
    readonly port: number,
  ) {}

  static async create(pgCtl: string): Promise<PrivateCluster> {
    const dir = mkdtempSync(join(tmpdir(), 'netdiag-pg-'));
    const uid = Number(execFileSync('id', ['-u', PG_USER]).toString());
    const gid = Number(execFileSync('id', ['-g', PG_USER]).toString());
    chownSync(dir, uid, gid);
    const cluster = new PrivateCluster(pgCtl, dir, await freePort());
    await cluster.ctl(['initdb', '-D', cluster.data, '-o', `--auth=trust --username=${PG_USER} --no-sync`]);
    // A test that dies of an uncaught error runs no after hooks: no cluster is left running.
    const leftover = () => {
      try {
        execFileSync('runuser', ['-u', PG_USER, '--', pgCtl, 'stop', '-D', cluster.data, '-m', 'immediate'], { stdio: 'ignore' });
      } catch {
        // not running
      }
      rmSync(dir, { recursive: true, force: true });
    };
    process.once('exit', leftover);
    cluster.forget = () => process.off('exit', leftover);
    await cluster.start();
    return cluster;
  }

  get url(): string {
    return `postgres://${PG_USER}@127.0.0.1:${this.port}/postgres`;
  }

  private get data(): string {
    return join(this.dir, 'data');
  }

  /** Asynchronous: the test's own requests go on while PostgreSQL stops or starts. */
  private async ctl(args: string[]): Promise<void> {
    await promisify(execFile)('runuser', ['-u', PG_USER, '--', this.pgCtl, ...args]);
  }

  /** Starts the cluster and waits until it accepts connections. */
  async start(): Promise<void> {
    await this.ctl([
      'start',
      '-D',
      this.data,
      '-w',
      '-l',
      join(this.dir, 'log'),
      '-o',
      `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off`,
    ]);
  }

  /** Stops the cluster: `fast` ends sessions cleanly, `immediate` is a crash. */
  async stop(mode: 'fast' | 'immediate'): Promise<void> {
    await this.ctl(['stop', '-D', this.data, '-w', '-m', mode]);
  }

  /** Stops the cluster if it runs and removes its directory. */
  async destroy(): Promise<void> {
    this.forget();
    try {
      await this.stop('immediate');
    } catch {
      // already stopped
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
