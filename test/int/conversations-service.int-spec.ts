import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { modelTableOf } from '@parley/agent';
import { BookQueries, BookShelf } from '@parley/books';
import { AppConfig, loadConfig } from '@parley/config';
import { ConversationEvent, conversationStreamId, DomainError } from '@parley/conversation';
import { AppendNotifier, EventStore, FoldSnapshots, StoredEvent, WrongExpectedVersionError } from '@parley/event-store';
import { ConversationLogQueries } from '@parley/read-models';
import { ConversationEraser } from '@parley/erasure';
import { ApiConversationFolds } from '../../apps/api/src/conversations/api-conversation-folds';
import { ConversationForking } from '../../apps/api/src/conversations/conversation-forking';
import { ConversationReads } from '../../apps/api/src/conversations/conversation-reads.service';
import { ConversationStarting } from '../../apps/api/src/conversations/conversation-starting';
import { ConversationUpdating } from '../../apps/api/src/conversations/conversation-updating';
import { ConversationWrites } from '../../apps/api/src/conversations/conversation-writes';
import { MessagePosting, PostInput } from '../../apps/api/src/conversations/message-posting.service';
import { ReadableBooks } from '../../apps/api/src/conversations/readable-books';
import { TurnCancelling } from '../../apps/api/src/conversations/turn-cancelling';
import { TurnEnqueuer } from '../../apps/api/src/conversations/turn-enqueuer';
import { assistantReplied } from '../support/factories/events';
import { createTestDatabase, TestDatabase } from '../support/test-database';
import { ProblemException } from '../../apps/api/src/http/problem.exception';
import { RateLimits } from '../../apps/api/src/rate-limits/rate-limits';

/**
 * The API's conversation use cases (one per command, and the reads), in process on a cloned
 * database: the commands' effect is read back from the stream itself (store.readStream), not from
 * the views they answer with.
 */
describe('conversation use cases (in process, real EventStore)', () => {
  let db: TestDatabase;
  let store: EventStore;
  let config: AppConfig;
  let sut: ReturnType<typeof newReplica>;

  beforeAll(async () => {
    db = await createTestDatabase();
    store = new EventStore(db.pool);
    config = loadConfig({ NODE_ENV: 'development', DATABASE_URL: db.url, LOG_LEVEL: 'silent' });
    sut = newReplica();
  });
  /**
   * The use cases as Nest wires them in one API replica, with nothing folded yet. Its notifier is
   * never started: this replica hears of no append, so what it keeps falls behind the log and its
   * posts meet the append's version check. Posts here are recorded without the request's budget,
   * rate limit and enqueue (MessagePosting.record); starts and forks are admitted by a limiter
   * that counts nothing (test/int/rate-limits.int-spec.ts tests the limits).
   */
  const newReplica = () => {
    const folds = new ApiConversationFolds(store, new FoldSnapshots(db.pool), new AppendNotifier(db.url));
    const writes = new ConversationWrites(store, folds);
    const log = new ConversationLogQueries(db.pool);
    const books = new ReadableBooks(new BookQueries(new BookShelf(db.pool)));
    const reads = new ConversationReads(folds, log, null as never, store, null as never, null as never);
    const posting = new MessagePosting(writes, log, null as never, null as never, null as never, config);
    const enqueuer = { turnCancelled: async () => undefined } as unknown as TurnEnqueuer;
    const unlimited = { consume: async () => undefined, capacity: () => 1 } as unknown as RateLimits;
    const starting = new ConversationStarting(writes, books, reads, unlimited);
    const updating = new ConversationUpdating(writes, books, reads, config, modelTableOf(config));
    const forking = new ConversationForking(store, writes, new BookQueries(new BookShelf(db.pool)), unlimited);
    const cancelling = new TurnCancelling(writes, enqueuer);
    return {
      start: (userId: string, input: Parameters<ConversationStarting['start']>[1]) => starting.start(userId, input),
      update: (...args: Parameters<ConversationUpdating['update']>) => updating.update(...args),
      post: (userId: string, id: string, input: PostInput, opts: { idempotencyKey?: string; ifMatch?: number }) =>
        posting.record(userId, id, input, opts),
      earlierPost: (...args: Parameters<MessagePosting['earlierPost']>) => posting.earlierPost(...args),
      view: (...args: Parameters<ConversationReads['view']>) => reads.view(...args),
      cancelTurn: (...args: Parameters<TurnCancelling['cancel']>) => cancelling.cancel(...args),
      fork: async (userId: string, id: string, version: number) =>
        reads.view(userId, await forking.fork({ id: userId }, id, version)),
    };
  };
  afterAll(() => db.drop());

  const stream = (conversationId: string): Promise<StoredEvent<ConversationEvent>[]> =>
    store.readStream<ConversationEvent>(conversationStreamId(conversationId));
  const shape = (events: StoredEvent<ConversationEvent>[]) => events.map((e) => ({ version: e.version, type: e.type }));
  const user = () => `user-${randomUUID()}`;
  const enqueue = { multitask: 'enqueue' as const };

  it('serves a long conversation on a new replica from its fold snapshot, the same as folded from the log', async () => {
    // given a conversation of 120 answered turns (241 events), posted and viewed through this replica
    const owner = user();
    const { id } = await sut.start(owner, { title: 'A long read' });
    for (let t = 0; t < 120; t++) {
      const { turnId, version } = await sut.post(owner, id, { content: `Question ${t}?`, ...enqueue }, {});
      await store.append(conversationStreamId(id), [assistantReplied({ turnId, content: `Answer ${t}.` })], {
        expectedVersion: version,
      });
    }
    const folded = await sut.view(owner, id);
    for (let i = 0; i < 100 && !(await snapshotOf(id)); i++) await new Promise((r) => setTimeout(r, 20));
    // taken when the fold reached 200 events; the next one is due 200 events later
    expect(await snapshotOf(id)).toBeGreaterThanOrEqual(200);
    expect(await snapshotOf(id)).toBeLessThan(241);
    // when a replica that never saw it (a deploy) views it
    const replica = newReplica();
    // then it answers the same view, and that view has every turn
    expect(await replica.view(owner, id)).toEqual(folded);
    expect(folded.turns).toHaveLength(120);
    expect(folded.turns.every((t) => t.status === 'replied')).toBe(true);
  });

  const snapshotOf = async (id: string): Promise<number | undefined> =>
    (
      await db.pool.query<{ version: number }>('SELECT version FROM fold_snapshots WHERE stream_id = $1', [
        conversationStreamId(id),
      ])
    ).rows[0]?.version;

  it('create then post: ConversationStarted at 1, UserMessagePosted at 2 with the ids it answered', async () => {
    // given a user
    const owner = user();
    // when they start a conversation and post to it
    const started = await sut.start(owner, { title: 'Chapter one' });
    const posted = await sut.post(owner, started.id, { content: 'Who is Marisol?', ...enqueue }, {});
    // then the stream holds exactly those two events, in order
    const events = await stream(started.id);
    expect(shape(events)).toEqual([
      { version: 1, type: 'ConversationStarted' },
      { version: 2, type: 'UserMessagePosted' },
    ]);
    expect(events[0].data).toEqual({
      ownerId: owner,
      bookId: null,
      bookIds: [],
      title: 'Chapter one',
      readingPosition: null,
    });
    expect(events[1].data).toEqual({ messageId: posted.messageId, turnId: posted.turnId, content: 'Who is Marisol?' });
    expect(events[1].metadata).toMatchObject({ userId: owner, correlationId: posted.turnId });
    expect(posted).toMatchObject({ version: 2, position: events[1].position, interrupted: [] });
    expect(started.version).toBe(1);
  });

  it('If-Match on a stale version is refused (WrongExpectedVersionError) and appends nothing', async () => {
    // given a conversation at version 2
    const owner = user();
    const { id } = await sut.start(owner, {});
    await sut.update(owner, id, { title: 'renamed once' }, 1);
    // when a client that saw version 1 renames and posts with If-Match: 1
    const rename = await sut.update(owner, id, { title: 'stale' }, 1).catch((e: unknown) => e);
    const post = await sut.post(owner, id, { content: 'hi', ...enqueue }, { ifMatch: 1 }).catch((e: unknown) => e);
    // then both are conflicts naming the versions, and the stream did not move
    for (const e of [rename, post]) {
      expect(e).toBeInstanceOf(WrongExpectedVersionError);
      expect(e).toMatchObject({ expected: 1, actual: 2 });
    }
    const events = await stream(id);
    expect(shape(events)).toEqual([
      { version: 1, type: 'ConversationStarted' },
      { version: 2, type: 'ConversationRenamed' },
    ]);
    // and with the current version it goes through
    await sut.post(owner, id, { content: 'hi', ...enqueue }, { ifMatch: 2 });
    expect((await stream(id)).map((e) => e.type)).toEqual([
      'ConversationStarted',
      'ConversationRenamed',
      'UserMessagePosted',
    ]);
  });

  it("If-Match on someone else's conversation is not found, not a conflict", async () => {
    const { id } = await sut.start(user(), {});
    await expect(sut.update(user(), id, { title: 'mine now' }, 7)).rejects.toMatchObject({ code: 'not_found' });
  });

  it('an Idempotency-Key repeat answers the first post; the same key with another body is refused', async () => {
    // given a post made with an Idempotency-Key
    const owner = user();
    const { id } = await sut.start(owner, {});
    const key = `key-${randomUUID()}`;
    const first = await sut.post(owner, id, { content: 'once', ...enqueue }, { idempotencyKey: key });
    // when it is repeated with the same body
    const repeat = await sut.post(owner, id, { content: 'once', ...enqueue }, { idempotencyKey: key });
    // then the answer is the first one and nothing more was appended
    expect(repeat).toMatchObject({
      messageId: first.messageId,
      turnId: first.turnId,
      version: first.version,
      position: first.position,
    });
    expect(await sut.earlierPost(owner, id, key, { content: 'once' })).toMatchObject({ turnId: first.turnId });
    // when the key comes again with another body
    const other = await sut
      .post(owner, id, { content: 'twice', ...enqueue }, { idempotencyKey: key })
      .catch((e: unknown) => e);
    // then it is a 422 and still nothing more was appended
    expect(other).toBeInstanceOf(ProblemException);
    expect([(other as ProblemException).code, (other as ProblemException).getStatus()]).toEqual([
      'idempotency_key_reused',
      422,
    ]);
    const events = await stream(id);
    expect(shape(events)).toEqual([
      { version: 1, type: 'ConversationStarted' },
      { version: 2, type: 'UserMessagePosted' },
    ]);
    // and the ids derive from the key: the event's id is what a racing repeat would collide on
    expect(events[1].data).toMatchObject({ messageId: first.messageId, turnId: first.turnId, content: 'once' });
  });

  it('multitask=reject is refused while a turn runs, and accepted once it ended', async () => {
    // given a conversation whose turn is running
    const owner = user();
    const { id } = await sut.start(owner, {});
    const running = await sut.post(owner, id, { content: 'first', ...enqueue }, {});
    // when another message is posted with multitask=reject
    const refused = await sut.post(owner, id, { content: 'second', multitask: 'reject' }, {}).catch((e: unknown) => e);
    // then it is turn_in_progress and nothing was appended
    expect(refused).toBeInstanceOf(DomainError);
    expect(refused).toMatchObject({ code: 'turn_in_progress' });
    expect(await stream(id)).toHaveLength(2);
    // given the turn ends (the worker's AssistantReplied)
    await store.append<ConversationEvent>(
      conversationStreamId(id),
      [assistantReplied({ turnId: running.turnId, content: 'an answer' })],
      { expectedVersion: 2 },
    );
    // then a reject post goes through
    const accepted = await sut.post(owner, id, { content: 'second', multitask: 'reject' }, {});
    expect(accepted.version).toBe(4);
    expect(shape(await stream(id)).map((e) => e.type)).toEqual([
      'ConversationStarted',
      'UserMessagePosted',
      'AssistantReplied',
      'UserMessagePosted',
    ]);
  });

  it('multitask=interrupt cancels the running turn in the same append', async () => {
    const owner = user();
    const { id } = await sut.start(owner, {});
    const running = await sut.post(owner, id, { content: 'first', ...enqueue }, {});
    const next = await sut.post(owner, id, { content: 'instead', multitask: 'interrupt' }, {});
    expect(next.interrupted).toEqual([running.turnId]);
    const events = await stream(id);
    expect(shape(events.slice(2))).toEqual([
      { version: 3, type: 'TurnCancelled' },
      { version: 4, type: 'UserMessagePosted' },
    ]);
    expect(events[2].data).toEqual({ turnId: running.turnId });
  });

  it('after erasure every command on the conversation is not found, and its stream is the tombstone alone', async () => {
    // given a conversation with a running turn, folded by this replica
    const owner = user();
    const { id } = await sut.start(owner, {});
    const { turnId } = await sut.post(owner, id, { content: 'hello', ...enqueue }, {});
    await sut.view(owner, id);
    // when it is erased
    const erasure = { userId: owner, subject: 'conversation' as const, erasureId: randomUUID() };
    const erased = await new ConversationEraser(store).erase(id, { ...erasure, ifMatch: 2 });
    // then the running turn is reported for its worker to stop
    expect(erased).toEqual({ conversationId: id, erasedEvents: 2, unendedTurns: [turnId] });
    const [tombstone, ...rest] = await stream(id);
    expect(rest).toEqual([]);
    expect(tombstone).toMatchObject({
      version: 3,
      type: 'ConversationErased',
      data: { erasedEvents: 2, subject: 'conversation' },
      metadata: { erasureId: erasure.erasureId },
    });
    // and erasing it again finds nothing
    expect(await new ConversationEraser(store).erase(id, erasure)).toBeUndefined();
    // and every command is not found, with or without If-Match
    const commands: Array<[string, () => Promise<unknown>]> = [
      ['view', () => sut.view(owner, id)],
      ['view at a version', () => sut.view(owner, id, 1)],
      ['post', () => sut.post(owner, id, { content: 'again', ...enqueue }, {})],
      ['post with If-Match', () => sut.post(owner, id, { content: 'again', ...enqueue }, { ifMatch: 3 })],
      ['rename', () => sut.update(owner, id, { title: 'x' })],
      ['rename with a stale If-Match', () => sut.update(owner, id, { title: 'x' }, 1)],
      ['cancel the turn', () => sut.cancelTurn(owner, id, turnId)],
      ['fork', () => sut.fork(owner, id, 1)],
    ];
    for (const [name, command] of commands) {
      const error = await command().catch((e: unknown) => e);
      expect({ name, error }).toEqual({ name, error: expect.objectContaining({ code: 'not_found' }) });
    }
    // and nothing was appended after the erasure
    expect(await stream(id)).toHaveLength(1);
  });

  describe('fork', () => {
    // given: Started(1) Posted(2) Replied(3) Renamed(4) Posted(5, running)
    let owner: string;
    let source: string;
    let sourceEvents: StoredEvent<ConversationEvent>[];
    beforeAll(async () => {
      owner = user();
      source = (await sut.start(owner, { title: 'source' })).id;
      const t1 = await sut.post(owner, source, { content: 'q1', ...enqueue }, {});
      await store.append<ConversationEvent>(
        conversationStreamId(source),
        [assistantReplied({ turnId: t1.turnId, content: 'a1' })],
        { expectedVersion: 2 },
      );
      await sut.update(owner, source, { title: 'renamed' }, 3);
      await sut.post(owner, source, { content: 'q2', ...enqueue }, {});
      sourceEvents = await stream(source);
    });

    it('at version N copies events 1..N, the first marked forkedFrom, each caused by its original', async () => {
      // when forked at version 4
      const fork = await sut.fork(owner, source, 4);
      // then the fork's stream is the source's first 4 events, renumbered 1..4 under new ids
      const events = await stream(fork.id);
      expect(fork.id).not.toBe(source);
      expect(shape(events)).toEqual(shape(sourceEvents.slice(0, 4)));
      expect(events[0].data).toEqual({ ...sourceEvents[0].data, forkedFrom: { conversationId: source, version: 4 } });
      expect(events.slice(1).map((e) => e.data)).toEqual(sourceEvents.slice(1, 4).map((e) => e.data));
      expect(events.every((e, i) => e.id !== sourceEvents[i].id)).toBe(true);
      expect(events.slice(1).map((e) => e.metadata.causationId)).toEqual(sourceEvents.slice(1, 4).map((e) => e.id));
      expect(fork).toMatchObject({ version: 4, title: 'renamed', forkedFrom: { conversationId: source, version: 4 } });
      // and the source is untouched
      expect(await stream(source)).toEqual(sourceEvents);
    });

    it('at a version inside a running turn ends that turn cancelled in the fork', async () => {
      const fork = await sut.fork(owner, source, 5);
      const events = await stream(fork.id);
      expect(shape(events)).toEqual([...shape(sourceEvents.slice(0, 5)), { version: 6, type: 'TurnCancelled' }]);
      expect(events[5].data).toEqual({ turnId: (sourceEvents[4].data as { turnId: string }).turnId });
    });

    it('past the current version is refused', async () => {
      await expect(sut.fork(owner, source, 6)).rejects.toMatchObject({ status: 400 });
    });
  });
});
