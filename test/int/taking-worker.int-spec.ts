import { randomBytes } from 'node:crypto';
import { Job, Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { TakingWorker } from '../../apps/worker/src/turns/taking-worker';
import { redisUrl } from '../support/test-database';
import { waitFor } from '../support/wait-for';

/** The worker class the agent's processor reads ahead with, on a real queue in Redis. */
describe(TakingWorker.name, () => {
  const prefix = `t${randomBytes(4).toString('hex')}`;
  let redis: Redis;
  let queue: Queue;
  let worker: TakingWorker | undefined;
  let workerRedis: Redis | undefined;

  beforeAll(() => {
    redis = new Redis(redisUrl(), { maxRetriesPerRequest: null });
    queue = new Queue('taking', { connection: redis, prefix });
  });
  afterEach(async () => {
    await worker?.close();
    workerRedis?.disconnect();
    worker = undefined;
  });
  afterAll(async () => {
    await queue.obliterate({ force: true });
    await queue.close();
    redis.disconnect();
  });

  const startWorker = (seen: string[], concurrency: number) => {
    worker = new TakingWorker(
      'taking',
      async (job: Job) => {
        seen.push(`process ${job.id}`);
      },
      {
        connection: (workerRedis = new Redis(redisUrl(), { maxRetriesPerRequest: null })),
        prefix,
        concurrency,
        autorun: false,
      },
    );
    worker.onTaken = (job) => seen.push(`taken ${job.id}`);
    void worker.run();
    return worker.waitUntilReady();
  };

  it('tells of a job it was woken for before it starts processing it, once, and not of a look that found none', async () => {
    const seen: string[] = [];
    await startWorker(seen, 4);
    await new Promise((r) => setTimeout(r, 100)); // idle, blocked on the queue's marker
    for (const id of ['a', 'b']) {
      await queue.add('job', {}, { jobId: id });
      await waitFor(`job ${id} to be processed`, async () => seen.includes(`process ${id}`), 5_000);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(seen).toEqual(['taken a', 'process a', 'taken b', 'process b']);
  });

  it('tells of a job it took as it finished another, before it starts it', async () => {
    const seen: string[] = [];
    await startWorker(seen, 1);
    await new Promise((r) => setTimeout(r, 100));
    // one at a time: d is taken by the move of c to completed, not by a look of its own
    await queue.addBulk([
      { name: 'job', data: {}, opts: { jobId: 'c' } },
      { name: 'job', data: {}, opts: { jobId: 'd' } },
    ]);
    await waitFor('job d to be processed', async () => seen.includes('process d'), 5_000);
    expect(seen).toEqual(['taken c', 'process c', 'taken d', 'process d']);
  });
});
