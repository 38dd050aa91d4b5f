import { NewEvent, StoredEvent, WrongExpectedVersionError } from '@parley/event-store';
import {
  Appended,
  CommandStore,
  ConversationFoldSource,
  FoldedForCommands,
  handleCommand,
  retryPauseMs,
} from './command-handler';
import { ConversationCommand, DomainError } from './decide';
import { ConversationEvent } from './events';
import { evolve, initialState } from './state';

const alice = 'alice';
const started: ConversationEvent = {
  type: 'ConversationStarted',
  data: { ownerId: alice, bookId: 'b1', title: null, readingPosition: null },
};
const deleted: ConversationEvent = { type: 'ConversationDeleted', data: {} };
const erase = (userId: string | null): ConversationCommand => ({
  type: 'EraseConversation',
  userId,
  subject: 'conversation',
});
const posted = (turnId: string): ConversationEvent => ({
  type: 'UserMessagePosted',
  data: { messageId: `m-${turnId}`, turnId, content: 'Why is a raven like a writing-desk?' },
});

const post = (turnId: string): ConversationCommand => ({
  type: 'PostUserMessage',
  userId: alice,
  messageId: `m-${turnId}`,
  turnId,
  content: 'Why is a raven like a writing-desk?',
  multitask: 'enqueue',
});

/** One conversation's stream in memory, with the store's guard: an append at another version fails. */
function memoryStream(conversationId = 'c') {
  const stored: StoredEvent<ConversationEvent>[] = [];
  const write = (events: NewEvent<ConversationEvent>[]) =>
    events.map((e) => {
      const s = {
        ...e,
        streamId: `conversation-${conversationId}`,
        version: stored.length + 1,
        position: String(stored.length + 1),
        transactionId: '1',
        metadata: e.metadata ?? {},
        occurredAt: new Date(),
      } as StoredEvent<ConversationEvent>;
      stored.push(s);
      return s;
    });
  /** appends made by someone else just before the handler's next append */
  const racing: NewEvent<ConversationEvent>[][] = [];
  const store: CommandStore & { appends: number } = {
    appends: 0,
    async append(streamId, events, { expectedVersion }) {
      this.appends++;
      const race = racing.shift();
      if (race) write(race);
      const expected = expectedVersion === 'no_stream' ? 0 : expectedVersion;
      if (expected !== stored.length) throw new WrongExpectedVersionError(streamId, expectedVersion, stored.length);
      return { events: write(events) };
    },
  };
  /** the fold the source keeps in memory, if any (given by a test; the handler takes it once) */
  let kept: FoldedForCommands | undefined;
  const folds: ConversationFoldSource<FoldedForCommands> = {
    load: async () => ({
      version: stored.length,
      state: stored.reduce(evolve, initialState()),
      lastEventId: stored.at(-1)?.id,
    }),
    kept: () => {
      const k = kept;
      kept = undefined;
      return k;
    },
  };
  const keep = (f: FoldedForCommands) => {
    kept = f;
  };
  return { stored, store, folds, racing, write, keep };
}

/** given(events).when(commands, options).then(events appended) */
function given(events: ConversationEvent[], stream = memoryStream()) {
  stream.write(events.map((e, i) => ({ ...e, id: `e${i + 1}` })));
  return {
    stream,
    when: (commands: ConversationCommand[], opts: Parameters<typeof handleCommand>[4] = {}) => {
      const run = () => handleCommand(stream.store, stream.folds, 'c', commands, opts);
      return {
        then: async (expected: ConversationEvent[]) => {
          const { events } = await run();
          expect(events.map(({ type, data }) => ({ type, data }))).toEqual(expected);
          return events;
        },
        thenFails: (error: object) => expect(run()).rejects.toThrow(expect.objectContaining(error)),
      };
    },
  };
}

describe(handleCommand.name, () => {
  it('decides every command on the state the ones before left, and appends them in one go', async () => {
    const { stream, when } = given([started]);
    await when([
      { type: 'RenameConversation', userId: alice, title: 'Alice' },
      { type: 'RenameConversation', userId: alice, title: 'Alice' },
      { type: 'ChangeReadingPosition', userId: alice, readingPosition: 3 },
    ]).then([
      { type: 'ConversationRenamed', data: { title: 'Alice' } },
      { type: 'ReadingPositionChanged', data: { readingPosition: 3 } },
    ]);
    expect(stream.store.appends).toBe(1);
    expect(stream.stored.map((e) => e.version)).toEqual([1, 2, 3]);
  });

  it('appends nothing when the commands change nothing', async () => {
    const { stream, when } = given([started]);
    await when([{ type: 'CancelTurn', userId: alice, turnId: 'gone' }]).thenFails({ code: 'turn_not_found' });
    await given([], stream)
      .when([{ type: 'RenameConversation', userId: alice, title: 'A' }])
      .then([{ type: 'ConversationRenamed', data: { title: 'A' } }]);
    await given([], stream)
      .when([{ type: 'RenameConversation', userId: alice, title: 'A' }])
      .then([]);
    expect(stream.store.appends).toBe(1);
  });

  it('stamps the same metadata on every event: user, correlation, and the last event as cause when the fold keeps it', async () => {
    const { when } = given([started, posted('t1')]);
    const events = await when(
      [
        {
          type: 'PostUserMessage',
          userId: alice,
          messageId: 'm2',
          turnId: 't2',
          content: 'And now?',
          multitask: 'interrupt',
        },
      ],
      { correlationId: 't2', eventId: (e) => `id-${e.type}` },
    ).then([
      { type: 'TurnCancelled', data: { turnId: 't1' } },
      { type: 'UserMessagePosted', data: { messageId: 'm2', turnId: 't2', content: 'And now?' } },
    ]);
    expect(events.map((e) => e.id)).toEqual(['id-TurnCancelled', 'id-UserMessagePosted']);
    for (const e of events) expect(e.metadata).toEqual({ userId: alice, correlationId: 't2', causationId: 'e2' });
  });

  it('starts a stream that does not exist yet (no_stream)', async () => {
    const { stream, when } = given([]);
    await when([
      { type: 'StartConversation', userId: alice, bookIds: ['b1'], title: null, readingPosition: null },
    ]).then([
      {
        type: 'ConversationStarted',
        data: { ownerId: alice, bookId: 'b1', bookIds: ['b1'], title: null, readingPosition: null },
      },
    ]);
    expect(stream.stored[0].metadata).toEqual({ userId: alice });
  });

  it('decides again on the new state after a lost race', async () => {
    const { stream, when } = given([started, posted('t1')]);
    // someone else's reply ends t1 between the load and the append
    stream.racing.push([{ id: 'r', type: 'TurnCancelled', data: { turnId: 't1' } }]);
    await when([{ type: 'CancelTurn', userId: alice, turnId: 't1' }]).then([]);
    expect(stream.store.appends).toBe(1);
    expect(stream.stored.map((e) => e.type)).toEqual(['ConversationStarted', 'UserMessagePosted', 'TurnCancelled']);
  });

  it('gives up after its retries', async () => {
    const { stream, when } = given([started]);
    for (let i = 0; i < 3; i++)
      stream.racing.push([{ id: `r${i}`, type: 'ConversationRenamed', data: { title: `r${i}` } }]);
    await when([{ type: 'RenameConversation', userId: alice, title: 'mine' }], { retries: 2 }).thenFails({
      name: 'WrongExpectedVersionError',
    });
    expect(stream.store.appends).toBe(3);
  });

  it('pauses before a third try, jittered, longer with each lost race up to 32 ms', () => {
    const pauses = (attempt: number) => Array.from({ length: 200 }, () => retryPauseMs(attempt));
    for (const [attempt, most] of [
      [1, 2],
      [3, 8],
      [5, 32],
      [7, 32],
    ]) {
      const seen = pauses(attempt);
      expect(Math.max(...seen)).toBeLessThan(most);
      expect(Math.max(...seen)).toBeGreaterThan(most / 2); // jittered over the whole range
      expect(Math.min(...seen)).toBeGreaterThanOrEqual(0);
    }
  });

  it('with If-Match, answers another version as a conflict, never retried', async () => {
    const { stream, when } = given([started, posted('t1')]);
    await when([{ type: 'RenameConversation', userId: alice, title: 'x' }], { ifMatch: 1 }).thenFails({
      name: 'WrongExpectedVersionError',
      expected: 1,
      actual: 2,
    });
    stream.racing.push([{ id: 'r', type: 'ConversationRenamed', data: { title: 'r' } }]);
    await given([], stream)
      .when([{ type: 'RenameConversation', userId: alice, title: 'x' }], { ifMatch: 2 })
      .thenFails({ name: 'WrongExpectedVersionError' });
    expect(stream.store.appends).toBe(1);
  });

  it("with If-Match on someone else's conversation, answers not found (never that it exists)", async () => {
    await given([started])
      .when([{ type: 'RenameConversation', userId: 'mallory', title: 'x' }], { ifMatch: 7 })
      .thenFails({ code: 'not_found' } satisfies Partial<DomainError>);
  });

  it("fails a pending turn for the system, in the owner's name, and leaves an ended one alone", async () => {
    const fail = (turnId: string): ConversationCommand => ({
      type: 'FailTurn',
      userId: null,
      turnId,
      code: 'llm_unavailable',
      message: 'down',
      retryable: true,
    });
    const { stream, when } = given([started, posted('t1')]);
    const [failed] = await when([fail('t1')], { correlationId: 't1' }).then([
      { type: 'TurnFailed', data: { turnId: 't1', code: 'llm_unavailable', message: 'down', retryable: true } },
    ]);
    expect(failed.metadata).toEqual({ userId: alice, correlationId: 't1', causationId: 'e2' });
    await given([], stream)
      .when([fail('t1')])
      .then([]);
  });

  it('stamps the metadata a policy makes, and nothing else, when given one', async () => {
    const { when } = given([started, posted('t1')]);
    const [tombstone] = await when([erase(alice)], { correlationId: 't1', metadata: () => ({ erasureId: 'x1' }) }).then(
      [{ type: 'ConversationErased', data: { erasedEvents: 2, subject: 'conversation' } }],
    );
    expect(tombstone.metadata).toEqual({ erasureId: 'x1' });
  });

  it('hands the policy who decided, on what, for which correlation', async () => {
    const { when } = given([started, posted('t1')]);
    const policy = jest.fn(() => ({}));
    await when([{ type: 'CancelTurn', userId: alice, turnId: 't1' }], { correlationId: 't1', metadata: policy }).then([
      { type: 'TurnCancelled', data: { turnId: 't1' } },
    ]);
    expect(policy).toHaveBeenCalledWith({
      userId: alice,
      folded: expect.objectContaining({ version: 2, lastEventId: 'e2' }),
      correlationId: 't1',
    });
  });

  it("writes through the store it is given, returns that store's answer, and decides again when it conflicts", async () => {
    const stream = memoryStream();
    stream.write([{ ...started, id: 'e1' }]);
    // a store that does more with each write (as eraseStream does), over the same guarded stream
    const counting: CommandStore<Appended & { writes: number }> = {
      async append(streamId, events, opts) {
        return { ...(await stream.store.append(streamId, events, opts)), writes: stream.store.appends };
      },
    };
    stream.racing.push([{ id: 'r', type: 'ConversationRenamed', data: { title: 'r' } }]);
    const { events, appended } = await handleCommand(counting, stream.folds, 'c', [erase(alice)]);
    expect(appended).toEqual({ events, writes: 2 });
    expect(events.map((e) => [e.version, e.data])).toEqual([[3, { erasedEvents: 2, subject: 'conversation' }]]);
  });

  it('refuses a command it has no decider for, appending nothing', async () => {
    const { stream } = given([started]);
    await expect(
      handleCommand(stream.store, stream.folds, 'c', [{ type: 'RecordModelReply', userId: null }]),
    ).rejects.toThrow(/no decider was given for command RecordModelReply/);
    expect(stream.store.appends).toBe(0);
  });

  it('leaves the store unasked when nothing was decided', async () => {
    const { stream } = given([started]);
    const result = await handleCommand(stream.store, stream.folds, 'c', [
      { type: 'FailTurn', userId: null, turnId: 'gone', code: 'llm_unavailable', message: 'down', retryable: true },
    ]);
    expect(result).toEqual({ events: [], folded: expect.objectContaining({ version: 1 }), appended: undefined });
    expect(stream.store.appends).toBe(0);
  });

  it('with If-Match, answers a conversation only some commands accept (a deleted one, to erase) as a conflict too', async () => {
    const { stream, when } = given([started, posted('t1'), deleted]);
    await when([erase(alice)], { ifMatch: 2 }).thenFails({ name: 'WrongExpectedVersionError', expected: 2, actual: 3 });
    await given([], stream)
      .when([erase('mallory')], { ifMatch: 2 })
      .thenFails({ code: 'not_found' } satisfies Partial<DomainError>);
    await given([], stream)
      .when([erase(alice)], { ifMatch: 3 })
      .then([{ type: 'ConversationErased', data: { erasedEvents: 3, subject: 'conversation' } }]);
  });

  it('tells the source of its append, and the caller of the events it is about to append, before they go out', async () => {
    const { stream } = given([started]);
    const told: string[] = [];
    const folds = {
      ...stream.folds,
      appended: (id: string, events: StoredEvent<ConversationEvent>[]) => {
        told.push(`appended ${id} ${events.map((e) => `${e.version}:${e.type}`).join(',')}`);
      },
    };
    // someone else's rename lands first: the caller hears of both tries, the source of the one append
    stream.racing.push([{ id: 'r', type: 'ConversationRenamed', data: { title: 'r' } }]);
    const beforeAppend = (events: NewEvent<ConversationEvent>[]) =>
      told.push(`about to append ${events.map((e) => `${e.type}@${stream.stored.length}`).join(',')}`);
    await handleCommand(stream.store, folds, 'c', [post('t1')], { correlationId: 't1', beforeAppend });
    expect(told).toEqual([
      'about to append UserMessagePosted@1',
      'about to append UserMessagePosted@2',
      'appended c 3:UserMessagePosted',
    ]);
  });

  describe('on the fold the source keeps (not read for the command)', () => {
    /** the fold as it stood after the first `n` events: what a caller keeps that has heard no more */
    const keptAt = async (stream: ReturnType<typeof memoryStream>, n: number): Promise<FoldedForCommands> => ({
      version: n,
      state: stream.stored.slice(0, n).reduce(evolve, initialState()),
    });

    it('decides on it and appends without loading when it is current', async () => {
      const { stream } = given([started]);
      stream.keep(await keptAt(stream, 1));
      const load = jest.spyOn(stream.folds, 'load');
      await given([], stream)
        .when([post('t1')])
        .then([posted('t1')]);
      expect(load).not.toHaveBeenCalled();
    });

    it('loads and decides again when the append on it loses to what the log has beyond it', async () => {
      const { stream } = given([started, posted('t0')]);
      stream.keep(await keptAt(stream, 1)); // has not heard of t0
      const load = jest.spyOn(stream.folds, 'load');
      await given([], stream)
        .when([post('t1')])
        .then([posted('t1')]);
      expect(load).toHaveBeenCalledTimes(1);
      expect(stream.stored.map((e) => e.version)).toEqual([1, 2, 3]);
    });

    it('loads and decides again when it refuses what the log allows (the conversation it has not heard of)', async () => {
      const { stream } = given([started]);
      stream.keep(await keptAt(stream, 0)); // kept before the conversation began
      await given([], stream)
        .when([post('t1')])
        .then([posted('t1')]);
      expect(stream.store.appends).toBe(1); // the refusal appended nothing
    });

    it('checks If-Match on the log, not on a kept version that is behind', async () => {
      const { stream } = given([started, posted('t0')]);
      stream.keep(await keptAt(stream, 1));
      await given([], stream)
        .when([post('t1')], { ifMatch: 2 })
        .then([posted('t1')]);
      stream.keep(await keptAt(stream, 3));
      await given([], stream)
        .when([post('t2')], { ifMatch: 2 })
        .thenFails({ name: WrongExpectedVersionError.name });
    });

    it("decides first on the caller's fold when given one, in place of the one the source keeps", async () => {
      const { stream } = given([started]);
      stream.keep(await keptAt(stream, 0)); // the source's: before the conversation began, so it would refuse
      const load = jest.spyOn(stream.folds, 'load');
      await given([], stream)
        .when([post('t1')], { decideFirstOn: await keptAt(stream, 1) })
        .then([posted('t1')]);
      expect(load).not.toHaveBeenCalled();
      // and, as a kept fold, one behind the log is decided again on the log
      await given([], stream)
        .when([post('t2')], { decideFirstOn: await keptAt(stream, 1) })
        .then([posted('t2')]);
      expect(load).toHaveBeenCalledTimes(1);
      expect(stream.stored.map((e) => e.version)).toEqual([1, 2, 3]);
    });

    it('still refuses what the log refuses', async () => {
      const { stream } = given([started, deleted]);
      stream.keep(await keptAt(stream, 1));
      await given([], stream)
        .when([post('t1')])
        .thenFails({ code: 'not_found' } satisfies Partial<DomainError>);
      expect(stream.stored).toHaveLength(2); // the append on the kept fold failed at its version
    });
  });
});
