import { ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { openStream } from '../support/sse-client';
import { FakeAnthropic } from '../support/fake-anthropic/fake-anthropic.server';
import { clientFor, fakeAnthropicEnv, freePort, startStack, Stack } from '../support/stack';
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
  let stack: Stack;
  let redis: ChildProcess;
  let port: number;
  let fake: FakeAnthropic;

  beforeAll(async () => {
    port = await freePort();
    redis = await startRedis(port);
    fake = await FakeAnthropic.start();
    stack = await startStack({ env: { REDIS_URL: `redis://127.0.0.1:${port}`, ...fakeAnthropicEnv(fake.url) } });
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
    redis?.kill('SIGKILL');
    await fake?.close();
  });

  it('loses no turn across a restart that empties Redis', async () => {
    const alice = clientFor(stack.base, `redis-${randomUUID()}`);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await alice.req('POST', '/v1/conversations', {})).body.id);
    const replied = async (id: string) =>
      ((await alice.req('GET', `/v1/conversations/${id}/events`)).body.items as any[]).filter(
        (e) => e.type === 'AssistantReplied',
      ).length;

    await alice.req('POST', `/v1/conversations/${ids[0]}/messages`, { content: 'before the outage' });
    await waitFor('the first reply', async () => (await replied(ids[0])) === 1, 20_000);

    redis.kill('SIGKILL');
    await new Promise((r) => redis.once('exit', r));
    const stream = openStream(`${stack.base}/v1/conversations/${ids[1]}/stream`, { token: alice.token });
    for (const id of ids) {
      const r = await alice.req('POST', `/v1/conversations/${id}/messages`, { content: 'during the outage' });
      expect(r.status).toBe(202);
    }
    await stream.until('stored events stream while Redis is down', (f) =>
      f.some((x) => x.event === 'UserMessagePosted'),
    );
    expect((await fetch(`${stack.base}/readyz`)).status).toBe(503);

    redis = await startRedis(port);
    const back = Date.now();
    await waitFor(
      'every turn answered after the restart',
      async () => (await replied(ids[0])) === 2 && (await replied(ids[1])) === 1 && (await replied(ids[2])) === 1,
      60_000,
      200,
    );
    stream.close();
    expect(fake.requests).toHaveLength(4); // one model call per turn: none lost, none bought twice
    console.log(`redis restart: all turns answered ${((Date.now() - back) / 1000).toFixed(1)} s after Redis came back`);
    expect((await fetch(`${stack.base}/readyz`)).status).toBe(200);
  }, 120_000);
});
