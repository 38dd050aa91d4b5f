import { randomUUID } from 'node:crypto';
import { Pool } from 'pg';
import { TURN_ENDING_TYPES } from '@parley/conversation';
import { expectOk, turnOf } from '../support/api';
import { FakeAnthropic } from '../support/fake-anthropic/fake-anthropic.server';
import { newBook } from '../support/factories/books';
import { PrivatePostgres, Standby, startPrivatePostgres } from '../support/private-postgres';
import { openStream, resumeUntil } from '../support/sse-client';
import { Client, clientFor, fakeAnthropicEnv, Stack, startStack } from '../support/stack';
import { waitFor } from '../support/wait-for';

/**
 * Two APIs and two workers on a primary, with a real streaming replica (pg_basebackup) as
 * DATABASE_READ_URL; the replica's replay is paused mid-test, as a lagging replica would be.
 */
describe('Parley with a Postgres read replica (e2e, 2 APIs, 2 workers)', () => {
  let primary: PrivatePostgres;
  let standby: Standby;
  let fake: FakeAnthropic;
  let stack: Stack;
  let replicaStats: Pool;

  beforeAll(async () => {
    primary = await startPrivatePostgres();
    const database = await primary.database();
    standby = await primary.standby();
    replicaStats = new Pool({ connectionString: standby.url, max: 1 });
    fake = await FakeAnthropic.start({ simulatePromptCache: false });
    stack = await startStack({
      apis: 2,
      workers: 2,
      database,
      env: { ...fakeAnthropicEnv(fake.url), DATABASE_READ_URL: standby.url },
    });
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
    await replicaStats?.end().catch(() => undefined);
    await standby?.stop();
    primary?.destroy();
    await fake?.close();
  });

  const events = async (c: Client, id: string) =>
    expectOk(await c.api.GET('/v1/conversations/{id}/events', { params: { path: { id } } })).items;
  /** statements the replica has run for Parley's API (its own `application_name`) */
  const replicaReads = async () =>
    Number(
      (await replicaStats.query(`SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = 'parley-reads'`))
        .rows[0].n,
    );

  it('serves history from the replica, shows a post at once while the replica lags, and SSE resumes across APIs', async () => {
    const user = `replica-${randomUUID()}`;
    const [a, b] = stack.apis.map((api) => clientFor(api.base, user));
    const bookId = (await newBook(a)).id;
    const id = expectOk(await a.api.POST('/v1/conversations', { body: { bookId } }), 201).id;
    const turns: string[] = [];
    const post = async (c: Client, content: string) =>
      turns.push(
        expectOk(
          await c.api.POST('/v1/conversations/{id}/messages', { params: { path: { id } }, body: { content } }),
          202,
        ).turnId,
      );
    const ended = async () => (await events(a, id)).filter((e) => TURN_ENDING_TYPES.includes(e.type)).length;

    const watcher = openStream(`${a.base}/v1/conversations/${id}/stream`, { token: a.token });
    await post(a, 'Where does the keeper keep his logbook?');
    await waitFor('the first turn to end', async () => (await ended()) === 1, 30_000);
    await watcher.until('the first answer on the stream', (f) => f.some((x) => x.event === 'AssistantReplied'));
    watcher.close();
    // the API keeps connections open to the replica it reads from
    expect(await replicaReads()).toBeGreaterThan(0);

    // the replica stops replaying: whatever is written now exists on the primary only
    await standby.pauseReplay();
    await post(b, 'And what does he write in it?');
    // read-your-writes: the history page right after the post has it (the lagging replica is passed over)
    const page = await events(b, id);
    expect(page.some((e) => e.type === 'UserMessagePosted' && turnOf(e) === turns[1])).toBe(true);
    await waitFor('the second turn to end', async () => (await ended()) === 2, 30_000);

    // the client comes back on the other API while the replica still lags: nothing lost, nothing repeated
    const total = (await events(a, id)).length;
    expect(await resumeUntil(watcher, b.base, id, b.token, total)).toEqual(
      Array.from({ length: total }, (_, i) => i + 1),
    );

    // and every turn ended once
    await standby.resumeReplay();
    const endings = (await events(a, id)).filter((e) => TURN_ENDING_TYPES.includes(e.type));
    expect(endings.map(turnOf)).toEqual(turns);
  }, 120_000);
});
