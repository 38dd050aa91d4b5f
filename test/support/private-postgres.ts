/**
 * A Postgres server of a test's own (initdb into a temporary folder, its own port), so the test
 * can stop and start it as a managed database's restart or failover would, without touching
 * the server every other suite uses.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { migrate } from '../../scripts/migrate';
import { freePort } from './stack';
import { TestDatabase } from './test-database';

function binDir(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a)) : [];
  const found = versions.map((v) => path.join(root, v, 'bin')).find((d) => existsSync(path.join(d, 'initdb')));
  if (!found) throw new Error('no Postgres server binaries (initdb) under /usr/lib/postgresql');
  return found;
}

/** initdb and postgres refuse to run as root: run them as the postgres user then. */
function run(cmd: string, args: string[]): void {
  const asRoot = process.getuid?.() === 0;
  const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args];
  const r = spawnSync(file, argv, { encoding: 'utf8', timeout: 60_000 });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed:\n${r.stdout}\n${r.stderr}`);
}

export interface PrivatePostgres {
  port: number;
  /** a migrated database on this server, shaped like createTestDatabase()'s */
  database(): Promise<TestDatabase>;
  /** `pg_ctl stop -m fast`: open connections are closed, new ones refused */
  stop(): void;
  start(): void;
  destroy(): void;
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = binDir();
  const dir = mkdtempSync(path.join(tmpdir(), 'parley-pg-'));
  chmodSync(dir, 0o777);
  const data = path.join(dir, 'data');
  const port = await freePort();
  if (process.getuid?.() === 0) execFileSync('chown', ['postgres', dir]);
  run(path.join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`;
  const start = () =>
    run(path.join(bin, 'pg_ctl'), ['-D', data, '-o', options, '-l', path.join(dir, 'log'), '-w', 'start']);
  const stop = () => run(path.join(bin, 'pg_ctl'), ['-D', data, '-m', 'fast', '-w', 'stop']);
  start();
  return {
    port,
    start,
    stop,
    database: async () => {
      const url = `postgres://postgres@127.0.0.1:${port}/parley`;
      await migrate(url);
      const { Pool } = await import('pg');
      const pool = new Pool({ connectionString: url, max: 5 });
      pool.on('error', () => undefined);
      return { url, pool, drop: async () => void (await pool.end().catch(() => undefined)) };
    },
    destroy: () => {
      try {
        stop();
      } catch {
        /* already stopped */
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
