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
  /** a streaming replica of this server (pg_basebackup, then a server of its own on another port) */
  standby(): Promise<Standby>;
  /** a migrated database on this server, shaped like createTestDatabase()'s */
  database(): Promise<TestDatabase>;
  /** `pg_ctl stop -m fast`: open connections are closed, new ones refused */
  stop(): void;
  start(): void;
  destroy(): void;
}

export interface Standby {
  port: number;
  /** the replica's copy of the primary's `parley` database */
  url: string;
  /** stops applying the primary's changes (the replica lags from here), and starts again */
  pauseReplay(): Promise<void>;
  resumeReplay(): Promise<void>;
  stop(): Promise<void>;
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
  const standbys: Array<() => void> = [];
  return {
    port,
    start,
    stop,
    standby: async () => {
      const standbyData = path.join(dir, `standby-${standbys.length}`);
      const standbyPort = await freePort();
      // -R writes standby.signal and the primary_conninfo that streams from the primary
      run(path.join(bin, 'pg_basebackup'), [
        '-h',
        '127.0.0.1',
        '-p',
        String(port),
        '-U',
        'postgres',
        '-D',
        standbyData,
        '-R',
        '-X',
        'stream',
        // a checkpoint now, not spread over checkpoint_timeout
        '--checkpoint=fast',
      ]);
      const standbyOptions = `-p ${standbyPort} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`;
      run(path.join(bin, 'pg_ctl'), [
        '-D',
        standbyData,
        '-o',
        standbyOptions,
        '-l',
        path.join(dir, `log-standby-${standbyPort}`),
        '-w',
        'start',
      ]);
      const stopStandby = () => {
        try {
          run(path.join(bin, 'pg_ctl'), ['-D', standbyData, '-m', 'immediate', '-w', 'stop']);
        } catch {
          /* already stopped */
        }
      };
      standbys.push(stopStandby);
      const url = `postgres://postgres@127.0.0.1:${standbyPort}/parley`;
      const { Pool } = await import('pg');
      const admin = new Pool({ connectionString: url, max: 2 });
      admin.on('error', () => undefined);
      return {
        port: standbyPort,
        url,
        pauseReplay: async () => void (await admin.query('SELECT pg_wal_replay_pause()')),
        resumeReplay: async () => void (await admin.query('SELECT pg_wal_replay_resume()')),
        stop: async () => {
          await admin.end().catch(() => undefined);
          stopStandby();
        },
      };
    },
    database: async () => {
      const url = `postgres://postgres@127.0.0.1:${port}/parley`;
      await migrate(url);
      const { Pool } = await import('pg');
      const pool = new Pool({ connectionString: url, max: 5 });
      pool.on('error', () => undefined);
      return { url, pool, drop: async () => void (await pool.end().catch(() => undefined)) };
    },
    destroy: () => {
      for (const stopStandby of standbys) stopStandby();
      try {
        stop();
      } catch {
        /* already stopped */
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
