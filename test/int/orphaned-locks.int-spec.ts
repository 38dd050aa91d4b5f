import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { RedisConnections } from '@parley/platform';
import { ORPHAN_CONFIRM_MS, OrphanedLocks } from '../../apps/worker/src/turns/orphaned-locks';
import { projectRoot } from '../../libs/platform/src/project-root';
import { redisUrl } from '../support/test-database';
import { waitFor } from '../support/wait-for';

/**
 * A TakingWorker (built, from dist/) in a process of its own with its presence connection, as the
 * agent's processor keeps one, holding every job it takes for ever: its locks are renewed as the
 * agent's are; SIGTERM starts a drain (BullMQ's close, which waits for the jobs); and the process
 * can be killed with -9 as a crash does.
 */
function holdingWorker(queueName: string, prefix: string): ChildProcess {
  const dist = (file: string) => JSON.stringify(path.join(projectRoot(), 'dist/apps/worker/src/turns', file));
  const script = `
    const { TakingWorker } = require(${dist('taking-worker.js')});
    const { presenceConnectionName } = require(${dist('worker-presence.js')});
    const { Redis } = require('ioredis');
    const url = ${JSON.stringify(redisUrl())};
    const worker = new TakingWorker(${JSON.stringify(queueName)}, () => new Promise(() => undefined), {
      connection: new Redis(url, { maxRetriesPerRequest: null }), autorun: false, concurrency: 4,
      prefix: ${JSON.stringify(prefix)}, lockDuration: 15000, lockRenewTime: 2000, stalledInterval: 500,
    });
    const presence = new Redis(url, { connectionName: 'parley-' + presenceConnectionName(worker.id) });
    presence.ping().then(() => worker.run());
    worker.on('active', (job) => console.log('holding ' + job.id + ' as ' + worker.id));
    process.on('SIGTERM', () => { console.log('draining'); void worker.close(); });`;
  return spawn(process.execPath, ['-e', script], { cwd: projectRoot(), stdio: ['ignore', 'pipe', 'inherit'] });
}

describe(OrphanedLocks.name, () => {
  const prefix = `t${randomBytes(4).toString('hex')}`;
  const queueName = 'orphans';
  let redis: Redis;
  let queue: Queue;
  let orphans: OrphanedLocks;
  let child: ChildProcess | undefined;
  let out = '';

  beforeAll(() => {
    redis = new Redis(redisUrl(), { maxRetriesPerRequest: null });
    queue = new Queue(queueName, { connection: redis, prefix });
    orphans = new OrphanedLocks(queue, { main: redis } as RedisConnections);
  });
  afterEach(() => child?.kill('SIGKILL'));
  afterAll(async () => {
    await queue.obliterate({ force: true });
    await queue.close();
    redis.disconnect();
  });

  /** Starts a holding worker and waits until it holds `jobId` (added unless `added`); its worker id. */
  async function holding(jobId: string, added = false): Promise<string> {
    child = holdingWorker(queueName, prefix);
    out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    if (!added) await queue.add('job', {}, { jobId });
    return waitFor(
      `the worker to hold ${jobId}`,
      () => new RegExp(`holding ${jobId} as (\\S+)`).exec(out)?.[1],
      10_000,
    );
  }

  /** Looks every 100 ms for `ms`; every job handed back meanwhile. */
  async function lookFor(ms: number): Promise<string[]> {
    const released: string[] = [];
    for (const until = Date.now() + ms; Date.now() < until; await new Promise((r) => setTimeout(r, 100)))
      released.push(...(await orphans.check()).map((r) => r.jobId));
    return released;
  }

  it('leaves the job of a live worker, of one whose presence blipped and came back, and of one draining for a shutdown', async () => {
    const workerId = await holding('live');
    const lock = `${prefix}:${queueName}:live:lock`;
    expect(await lookFor(ORPHAN_CONFIRM_MS * 2)).toEqual([]);
    // its presence connection cut under it (that one only: other suites share this Redis); ioredis
    // reconnects and names it again
    const list = String(await redis.client('LIST'));
    const named = list.split('\n').find((line) => line.includes(` name=parley-worker:${workerId} `));
    const connectionId = / ?id=(\d+) /.exec(` ${named}`)?.[1];
    expect(connectionId).toBeDefined();
    expect(Number(await redis.client('KILL', 'ID', connectionId!))).toBe(1);
    expect(await lookFor(ORPHAN_CONFIRM_MS * 3)).toEqual([]);
    expect(await redis.get(lock)).toMatch(new RegExp(`^${workerId}:`));
    // a drain closes BullMQ's blocking connection at once, and waits for the jobs in hand
    child!.kill('SIGTERM');
    await waitFor('the drain to start', () => out.includes('draining'));
    expect(await lookFor(ORPHAN_CONFIRM_MS * 3)).toEqual([]);
    expect(await redis.get(lock)).toMatch(new RegExp(`^${workerId}:`));
  });

  it('hands the job of a worker killed with -9 back to the queue once its connection has been gone ORPHAN_CONFIRM_MS', async () => {
    const workerId = await holding('cut');
    expect(workerId).toMatch(/^present-/);
    const lock = `${prefix}:${queueName}:cut:lock`;
    child!.kill('SIGKILL');
    const killedAt = Date.now();
    await waitFor('the job handed back', async () => (await orphans.check()).some((r) => r.jobId === 'cut'), 5_000, 50);
    const releasedAfter = Date.now() - killedAt;
    expect(releasedAfter).toBeGreaterThanOrEqual(ORPHAN_CONFIRM_MS);
    expect(await redis.exists(lock)).toBe(0);
    expect(await queue.getJobState('cut')).toBe('waiting');
    // a new worker takes it from the queue
    const taker = await holding('cut', true);
    expect(taker).not.toBe(workerId);
    expect(await redis.get(lock)).toMatch(new RegExp(`^${taker}:`));
  });
});
