import { ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { expectOk, expectProblem, isEvent } from '../support/api';
import { openStream } from '../support/sse-client';
import { clientFor, freePort } from '../support/stack';
import { useFakeStack } from '../support/use-stack';
import { waitFor } from '../support/wait-for';

/** A private Redis without persistence, so a restart loses every queued job, as the worst case does. */
async function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    {
      stdio: 'ignore',
    },
  );
  await waitFor('redis to accept connections', async () => {
    const net = await import('node:net');
    return new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => (s.end(), resolve(true)));
      s.on('error', () => resolve(false));
    });
  });
  return child;
}

describe('Redis restart (e2e): posts made while Redis is down are answered once it is back', () => {
  let redis: ChildProcess;
  let port: number;
  beforeAll(async () => {
    port = await freePort();
    redis = await startRedis(port);
  });
  const s = useFakeStack({ env: () => ({ REDIS_URL: `redis://127.0.0.1:${port}` }) });
  afterAll(() => redis?.kill('SIGKILL'));

  it('loses no turn across a restart that empties Redis', async () => {
    const alice = clientFor(s.stack.base, `redis-${randomUUID()}`);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push(expectOk(await alice.api.POST('/v1/conversations', { body: {} }), 201).id);
    const replied = async (id: string) =>
      expectOk(await alice.api.GET('/v1/conversations/{id}/events', { params: { path: { id } } })).items.filter(
        isEvent('AssistantReplied'),
      ).length;
    const post = (id: string, content: string) =>
      alice.api.POST('/v1/conversations/{id}/messages', { params: { path: { id } }, body: { content } });

    await post(ids[0], 'before the outage');
    await waitFor('the first reply', async () => (await replied(ids[0])) === 1, 20_000);

    redis.kill('SIGKILL');
    await new Promise((r) => redis.once('exit', r));
    const stream = openStream(`${s.stack.base}/v1/conversations/${ids[1]}/stream`, { token: alice.token });
    for (const id of ids) {
      expectOk(await post(id, 'during the outage'), 202);
    }
    await stream.until('stored events stream while Redis is down', (f) =>
      f.some((x) => x.event === 'UserMessagePosted'),
    );
    expect(expectProblem(await alice.api.GET('/readyz'), 503)).toMatchObject({
      code: 'not_ready',
      checks: { redis: 'down' },
    });

    redis = await startRedis(port);
    const back = Date.now();
    await waitFor(
      'every turn answered after the restart',
      async () => (await replied(ids[0])) === 2 && (await replied(ids[1])) === 1 && (await replied(ids[2])) === 1,
      60_000,
      200,
    );
    stream.close();
    expect(s.fake.requests).toHaveLength(4); // one model call per turn: none lost, none bought twice
    console.log(`redis restart: all turns answered ${((Date.now() - back) / 1000).toFixed(1)} s after Redis came back`);
    expect(expectOk(await alice.api.GET('/readyz'), 200).status).toBe('ready');
  }, 120_000);
});
