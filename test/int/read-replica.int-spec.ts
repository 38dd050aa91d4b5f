import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { Pool } from 'pg';
import { conversationStreamId } from '@parley/conversation';
import { EventStore } from '@parley/event-store';
import { ReadReplica } from '@parley/platform';
import { ReadModelQueries } from '@parley/read-models';
import { countingPool } from '../support/counting-pool';
import { conversationRenamed } from '../support/factories/events';
import { PrivatePostgres, Standby, startPrivatePostgres } from '../support/private-postgres';
import { TestDatabase } from '../support/test-database';
import { startSseServer } from '../support/sse-server';
import { waitFor } from '../support/wait-for';

/**
 * A real streaming replica (pg_basebackup of a private primary, a second server) whose replay the
 * tests pause to make it lag, as a replica under load or behind a slow link does.
 */
describe('reads from a Postgres streaming replica (DATABASE_READ_URL)', () => {
  let primary: PrivatePostgres;
  let db: TestDatabase;
  let standby: Standby;
  let replicaPool: Pool;
  let store: EventStore;

  beforeAll(async () => {
    primary = await startPrivatePostgres();
    db = await primary.database();
    standby = await primary.standby();
    replicaPool = new Pool({ connectionString: standby.url, max: 5 });
    replicaPool.on('error', () => undefined);
    store = new EventStore(db.pool);
  }, 120_000);
  afterAll(async () => {
    await replicaPool?.end().catch(() => undefined);
    await standby?.stop();
    await db?.drop();
    primary?.destroy();
  });
  afterEach(async () => standby.resumeReplay());

  /** A stream of `n` events (a start and renames), appended on the primary. */
  async function streamOf(n: number): Promise<string> {
    const streamId = conversationStreamId(randomUUID());
    const events = Array.from({ length: n }, (_, i) => conversationRenamed(`title ${i + 1}`));
    await store.append(streamId, events, { expectedVersion: 0 });
    return streamId;
  }

  const onReplica = async (streamId: string) =>
    (await replicaPool.query('SELECT count(*)::int AS n FROM events WHERE stream_id = $1', [streamId])).rows[0].n;

  describe('ReadReplica.currentPool: every write committed before the read, from the replica when it has it', () => {
    it('serves from the replica once it has replayed the primary, and from the primary while it lags', async () => {
      const reads = new ReadReplica(db.pool, replicaPool, 200);
      const caughtUp = await streamOf(1);
      await waitFor('the replica to replay it', async () => (await onReplica(caughtUp)) === 1);
      expect(await reads.currentPool()).toBe(replicaPool);

      await standby.pauseReplay();
      const written = await streamOf(3); // committed on the primary only
      expect(await reads.currentPool()).toBe(db.pool);
      expect(await onReplica(written)).toBe(0); // the replica does lag: the primary was the right answer

      await standby.resumeReplay();
      await waitFor('the replica to catch up', async () => (await reads.currentPool()) === replicaPool);
      expect(await onReplica(written)).toBe(3);
    });

    it('loses an erased stream as the primary does: the tombstone alone, once it has replayed the erasure', async () => {
      const streamId = await streamOf(4);
      await waitFor('the replica to replay the stream', async () => (await onReplica(streamId)) === 4);
      const tombstone = { type: 'ConversationErased', data: { erasedEvents: 4, subject: 'conversation' } };
      await store.eraseStream(streamId, { ...tombstone, id: randomUUID() }, { expectedVersion: 4 });
      await waitFor('the replica to replay the erasure', async () => (await onReplica(streamId)) === 1);
      const { rows } = await replicaPool.query('SELECT version, type FROM events WHERE stream_id = $1', [streamId]);
      expect(rows).toEqual([{ version: 5, type: 'ConversationErased' }]);
    });

    it('read models through it show a write made just before, replica lagging or not', async () => {
      const owner = randomUUID();
      const reads = new ReadReplica(db.pool, replicaPool, 100);
      const queries = new ReadModelQueries(() => reads.currentPool());
      await standby.pauseReplay();
      await db.pool.query(
        `INSERT INTO conversations (id, owner_id, title, version, message_count, created_at, last_activity_at)
         VALUES ($1, $2, 'fresh', 1, 0, now(), now())`,
        [randomUUID(), owner],
      );
      expect((await queries.listConversations(owner, { limit: 10 })).items.map((c) => c.title)).toEqual(['fresh']);
    });

    it('goes to the primary when the replica is unreachable', async () => {
      const gone = new Pool({
        connectionString: 'postgres://postgres@127.0.0.1:1/parley',
        connectionTimeoutMillis: 500,
      });
      gone.on('error', () => undefined);
      expect(await new ReadReplica(db.pool, gone, 50).currentPool()).toBe(db.pool);
      await gone.end();
    });

    it('does not wait out the connect timeout of a replica that accepts and never answers', async () => {
      const silent = net.createServer(() => undefined); // takes the connection, says nothing
      await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
      const port = (silent.address() as net.AddressInfo).port;
      const hanging = new Pool({
        connectionString: `postgres://postgres@127.0.0.1:${port}/parley`,
        connectionTimeoutMillis: 3_000,
      });
      hanging.on('error', () => undefined);
      const started = Date.now();
      expect(await new ReadReplica(db.pool, hanging, 100).currentPool()).toBe(db.pool);
      expect(Date.now() - started).toBeLessThan(1_500); // well inside the replica's 3 s connect timeout
      silent.close();
      await hanging.end().catch(() => undefined);
    }, 20_000);
  });

  describe('SSE catch-up from the replica', () => {
    /** An SSE server as the API runs it, its catch-up reads on the replica, the primary's statements counted. */
    async function startServer() {
      const counted = countingPool(db.pool);
      const replica = countingPool(replicaPool);
      const { port, stop } = await startSseServer({
        databaseUrl: db.url,
        store: new EventStore(counted.pool),
        reads: new ReadReplica(counted.pool, replica.pool),
      });
      return {
        primaryStatements: counted.statements,
        replicaStatements: replica.statements,
        /** the ids of the frames a client reading from `after` receives, until it has `until` */
        read: async (streamId: string, after: number, until: number): Promise<number[]> => {
          const ac = new AbortController();
          const res = await fetch(`http://127.0.0.1:${port}/${streamId.split('-').slice(1).join('-')}?after=${after}`, {
            signal: ac.signal,
          });
          const ids: number[] = [];
          let text = '';
          const reader = res.body!.getReader();
          while (ids.at(-1) !== until) {
            const { value, done } = await reader.read();
            if (done) break;
            text += Buffer.from(value).toString();
            const frames = text.split('\n\n');
            text = frames.pop()!;
            for (const f of frames) {
              const id = /^id: (\d+)$/m.exec(f)?.[1];
              if (id) ids.push(Number(id));
            }
          }
          ac.abort();
          return ids;
        },
        stop,
      };
    }

    it('reads a long history from the replica and only the head from the primary', async () => {
      const streamId = await streamOf(600);
      await waitFor('the replica to replay it', async () => (await onReplica(streamId)) === 600);
      const server = await startServer();
      try {
        const ids = await server.read(streamId, 0, 600);
        expect(ids).toEqual(Array.from({ length: 600 }, (_, i) => i + 1));
        const pages = (statements: string[]) => statements.filter((s) => s.includes('version > $2')).length;
        expect(pages(server.replicaStatements)).toBeGreaterThanOrEqual(3); // 600 events in pages of 200
        expect(pages(server.primaryStatements)).toBeLessThanOrEqual(1); // at most the check at the end
      } finally {
        await server.stop();
      }
    });

    it('loses and repeats nothing while the replica lags: what it lacks comes from the primary', async () => {
      const streamId = await streamOf(250);
      await waitFor('the replica to replay it', async () => (await onReplica(streamId)) === 250);
      await standby.pauseReplay();
      await store.append(
        streamId,
        Array.from({ length: 150 }, (_, i) => conversationRenamed(`late ${i}`)),
        { expectedVersion: 250 },
      );
      expect(await onReplica(streamId)).toBe(250);
      const server = await startServer();
      try {
        const ids = await server.read(streamId, 10, 400);
        expect(ids).toEqual(Array.from({ length: 390 }, (_, i) => i + 11));
      } finally {
        await server.stop();
      }
    });
  });
});
