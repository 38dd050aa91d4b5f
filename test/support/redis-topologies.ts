/**
 * Real Redis topologies on this machine, for the tests that run Parley on them: a 3-master Redis
 * Cluster, and Sentinel (a primary, a replica, three sentinels). Each server is a private
 * `redis-server` on a free port, without persistence, its files in a temp directory.
 */
import { ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './stack';
import { waitFor } from './wait-for';

const run = promisify(execFile);

export interface RedisTopologyUnderTest {
  /** what to give Parley's processes */
  env: Record<string, string>;
  stop(): Promise<void>;
}

interface Server {
  port: number;
  child: ChildProcess;
}

async function cli(port: number, ...args: string[]): Promise<string> {
  return (await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args])).stdout.trim();
}

async function startServer(dir: string, args: string[], port?: number): Promise<Server> {
  port ??= await freePort();
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, ...args],
    { stdio: 'ignore' },
  );
  await waitFor(`redis-server :${port} to answer`, async () => (await cli(port!, 'PING').catch(() => '')) === 'PONG');
  return { port, child };
}

async function stopAll(servers: Server[], dir: string): Promise<void> {
  await Promise.all(
    servers.map(
      (s) =>
        new Promise<void>((resolve) => {
          if (s.child.exitCode !== null || s.child.signalCode !== null) return resolve();
          s.child.once('exit', () => resolve());
          s.child.kill('SIGKILL');
        }),
    ),
  );
  rmSync(dir, { recursive: true, force: true });
}

/** Three masters, no replicas, slots split evenly (`redis-cli --cluster create`), as an operator starts one. */
export async function startRedisCluster(): Promise<RedisTopologyUnderTest & { ports: number[] }> {
  const dir = mkdtempSync(path.join(tmpdir(), 'parley-cluster-'));
  const servers: Server[] = [];
  for (let i = 0; i < 3; i++) {
    const port = await freePort();
    // the bus defaults to port + 10000, which may be taken or past 65535: give it a free port of its own
    const busPort = await freePort();
    const cluster = ['--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`];
    const timing = ['--cluster-node-timeout', '2000', '--cluster-port', String(busPort)];
    servers.push(await startServer(dir, [...cluster, ...timing], port));
  }
  const nodes = servers.map((s) => `127.0.0.1:${s.port}`);
  await run('redis-cli', ['--cluster', 'create', ...nodes, '--cluster-replicas', '0', '--cluster-yes']);
  await waitFor(
    'the cluster to be ok on every node',
    async () => {
      for (const s of servers) if (!(await cli(s.port, 'CLUSTER', 'INFO')).includes('cluster_state:ok')) return false;
      return true;
    },
    20_000,
  );
  return {
    ports: servers.map((s) => s.port),
    env: { REDIS_CLUSTER_NODES: nodes.join(',') },
    stop: () => stopAll(servers, dir),
  };
}

export interface SentinelUnderTest extends RedisTopologyUnderTest {
  /** the port of the server the sentinels call primary now */
  primaryPort(): Promise<number>;
  /** kills the primary outright and waits until the sentinels have promoted the replica */
  killPrimary(): Promise<number>;
}

/**
 * A primary, one replica and three sentinels (quorum 2) that call the primary down after 1 s
 * without an answer, as a small production setup would with shorter timeouts.
 */
export async function startRedisSentinel(name = 'mymaster'): Promise<SentinelUnderTest> {
  const dir = mkdtempSync(path.join(tmpdir(), 'parley-sentinel-'));
  const primary = await startServer(dir, []);
  const replica = await startServer(dir, ['--replicaof', '127.0.0.1', String(primary.port)]);
  await waitFor('the replica to sync', async () =>
    (await cli(replica.port, 'INFO', 'replication')).includes('master_link_status:up'),
  );
  const servers = [primary, replica];
  const sentinelPorts: number[] = [];
  for (let i = 0; i < 3; i++) {
    const port = await freePort();
    const conf = path.join(dir, `sentinel-${port}.conf`);
    // a sentinel rewrites its config file as it learns the topology, so each gets its own
    writeFileSync(
      conf,
      [
        `port ${port}`,
        'bind 127.0.0.1',
        `dir ${dir}`,
        `sentinel monitor ${name} 127.0.0.1 ${primary.port} 2`,
        `sentinel down-after-milliseconds ${name} 1000`,
        `sentinel failover-timeout ${name} 5000`,
        `sentinel parallel-syncs ${name} 1`,
        '',
      ].join('\n'),
    );
    const child = spawn('redis-server', [conf, '--sentinel'], { stdio: 'ignore' });
    await waitFor(`sentinel :${port} to answer`, async () => (await cli(port, 'PING').catch(() => '')) === 'PONG');
    servers.push({ port, child });
    sentinelPorts.push(port);
  }
  const primaryPort = async () =>
    Number((await cli(sentinelPorts[0], 'SENTINEL', 'get-master-addr-by-name', name)).split('\n')[1]);
  await waitFor('the sentinels to see each other and the replica', async () => {
    const info = await cli(sentinelPorts[0], 'SENTINEL', 'master', name);
    const field = (k: string) => Number(info.split('\n')[info.split('\n').indexOf(k) + 1]);
    return field('num-other-sentinels') === 2 && field('num-slaves') === 1;
  });
  return {
    env: { REDIS_SENTINELS: sentinelPorts.map((p) => `127.0.0.1:${p}`).join(','), REDIS_SENTINEL_NAME: name },
    primaryPort,
    killPrimary: async () => {
      const before = await primaryPort();
      const server = servers.find((s) => s.port === before)!;
      server.child.kill('SIGKILL');
      let after = before;
      await waitFor(
        'the sentinels to promote the replica',
        async () => {
          after = await primaryPort();
          return after !== before && (await cli(after, 'ROLE').catch(() => '')).startsWith('master');
        },
        30_000,
      );
      return after;
    },
    stop: () => stopAll(servers, dir),
  };
}
