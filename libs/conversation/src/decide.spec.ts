import { ConversationCommand, decide, DomainError, isConversationCommand } from './decide';
import { ConversationEvent } from './events';
import { fold, initialState, titleFromMessage } from './state';

const alice = 'alice';
const started: ConversationEvent = {
  type: 'ConversationStarted',
  data: { ownerId: alice, bookId: 'b1', title: null, readingPosition: null },
};
const posted = (turnId: string, content = 'Who is the Cheshire Cat?'): ConversationEvent => ({
  type: 'UserMessagePosted',
  data: { messageId: `m-${turnId}`, turnId, content },
});
const post = (turnId: string, multitask: 'enqueue' | 'reject' | 'interrupt' = 'enqueue'): ConversationCommand => ({
  type: 'PostUserMessage',
  userId: alice,
  messageId: `m-${turnId}`,
  turnId,
  content: 'Why is a raven like a writing-desk?',
  multitask,
});

/** given(events).when(command).then(events) */
const given = (events: ConversationEvent[]) => ({
  when: (command: ConversationCommand) => ({
    then: (expected: ConversationEvent[]) => expect(decide(command, fold(events))).toEqual(expected),
    thenFails: (code: DomainError['code']) =>
      expect(() => decide(command, fold(events))).toThrow(expect.objectContaining({ code })),
  }),
});

const started0 = started;

describe(decide.name, () => {
  describe("the reader's budget in force", () => {
    it('is recorded on the post that the worker will hold to it, and left out when none is set', () => {
      given([started0])
        .when({ ...(post('t1') as Extract<ConversationCommand, { type: 'PostUserMessage' }>), budgetUsdPerMonth: 5 })
        .then([
          {
            type: 'UserMessagePosted',
            data: {
              messageId: 'm-t1',
              turnId: 't1',
              content: 'Why is a raven like a writing-desk?',
              budgetUsdPerMonth: 5,
            },
          },
        ]);
      given([started0])
        .when(post('t1'))
        .then([posted('t1', 'Why is a raven like a writing-desk?')]);
    });

    it("is recorded on each of a sequential batch's prompts", () => {
      const items = [{ prompt: 'one?', turnId: 'b1', messageId: 'mb1', conversationId: 'c' }];
      const [, prompt] = decide(
        { type: 'StartBatch', userId: alice, batchId: 'B', mode: 'sequential', items, budgetUsdPerMonth: 0.5 },
        fold([started0]),
      );
      expect(prompt).toMatchObject({ type: 'UserMessagePosted', data: { turnId: 'b1', budgetUsdPerMonth: 0.5 } });
    });
  });

  describe('StartBatch and CompleteBatch', () => {
    const items = [
      { prompt: 'one?', turnId: 'b1', messageId: 'mb1', conversationId: 'c' },
      { prompt: 'two?', turnId: 'b2', messageId: 'mb2', conversationId: 'c' },
    ];
    const start = (mode: 'sequential' | 'independent'): ConversationCommand => ({
      type: 'StartBatch',
      userId: alice,
      batchId: 'B',
      mode,
      items,
    });
    const complete: ConversationCommand = {
      type: 'CompleteBatch',
      userId: alice,
      batchId: 'B',
      answered: 2,
      failures: 0,
    };
    const started = (mode: 'sequential' | 'independent'): ConversationEvent => ({
      type: 'BatchStarted',
      data: { batchId: 'B', mode, items: items.map(({ messageId: _m, ...i }) => i) },
    });

    it('posts a sequential batch as the next turns, in order, each linked to the batch', () => {
      given([started0])
        .when(start('sequential'))
        .then([
          started('sequential'),
          {
            type: 'UserMessagePosted',
            data: { messageId: 'mb1', turnId: 'b1', content: 'one?', batch: { batchId: 'B', conversationId: 'c' } },
          },
          {
            type: 'UserMessagePosted',
            data: { messageId: 'mb2', turnId: 'b2', content: 'two?', batch: { batchId: 'B', conversationId: 'c' } },
          },
        ]);
      given([started0])
        .when(start('independent'))
        .then([started('independent')]);
    });

    it('completes a batch once, and folds its state', () => {
      given([started0, started('independent')])
        .when(complete)
        .then([{ type: 'BatchCompleted', data: { batchId: 'B', answered: 2, failures: 0 } }]);
      const done: ConversationEvent = { type: 'BatchCompleted', data: { batchId: 'B', answered: 2, failures: 0 } };
      given([started0, started('independent'), done])
        .when(complete)
        .then([]);
      given([started0]).when(complete).then([]); // no such batch
      expect(fold([started0, started('independent')]).batches.B).toMatchObject({
        mode: 'independent',
        completed: false,
      });
      expect(fold([started0, started('independent'), done]).batches.B.completed).toBe(true);
    });
  });

  describe('RecordPassagesWithdrawn', () => {
    const withdrawn: ConversationCommand = {
      type: 'RecordPassagesWithdrawn',
      userId: null,
      bookId: 'b1',
      redactedEvents: 2,
    };

    it("given a reader's conversation whose events quoted a withdrawn book, then PassagesWithdrawn says how many were redacted", () => {
      given([started0, posted('t1')])
        .when(withdrawn)
        .then([{ type: 'PassagesWithdrawn', data: { bookId: 'b1', redactedEvents: 2 } }]);
    });

    it('tells nothing to a conversation that is erased, deleted or not there', () => {
      given([started0, { type: 'ConversationErased', data: { erasedEvents: 1, subject: 'conversation' } }])
        .when(withdrawn)
        .then([]);
      given([started0, { type: 'ConversationDeleted', data: {} }])
        .when(withdrawn)
        .then([]);
      given([]).when(withdrawn).then([]);
    });
  });

  describe('FailTurn', () => {
    const fail = (turnId: string, message = 'the model is down'): ConversationCommand => ({
      type: 'FailTurn',
      userId: null,
      turnId,
      code: 'llm_unavailable',
      message,
      retryable: true,
    });
    const failed = (turnId: string, message = 'the model is down'): ConversationEvent => ({
      type: 'TurnFailed',
      data: { turnId, code: 'llm_unavailable', message, retryable: true },
    });

    it('fails a pending turn', () => {
      given([started0, posted('t1')])
        .when(fail('t1'))
        .then([failed('t1')]);
    });

    it('leaves a turn that ended already, or one the conversation does not have', () => {
      given([started0, posted('t1'), { type: 'TurnCancelled', data: { turnId: 't1' } }])
        .when(fail('t1'))
        .then([]);
      given([started0, posted('t1'), failed('t1')])
        .when(fail('t1'))
        .then([]);
      given([started0]).when(fail('t9')).then([]);
      given([]).when(fail('t1')).then([]);
    });

    it('cuts a long message to its first 1000 characters', () => {
      const long = 'x'.repeat(1500);
      given([started0, posted('t1')])
        .when(fail('t1', long))
        .then([failed('t1', long.slice(0, 1000))]);
    });
  });

  describe('ChangeSources', () => {
    const books = (...ids: string[]) => ids.map((id) => ({ id, title: `Book ${id}` }));
    const change = (...ids: string[]): ConversationCommand => ({
      type: 'ChangeSources',
      userId: alice,
      books: books(...ids),
    });

    it('records the whole list of books with their titles, and nothing when it is the same list', () => {
      given([started])
        .when(change('b1', 'b2'))
        .then([{ type: 'SourcesChanged', data: { bookIds: ['b1', 'b2'], books: books('b1', 'b2') } }]);
      given([started]).when(change('b1')).then([]);
      given([started])
        .when(change())
        .then([{ type: 'SourcesChanged', data: { bookIds: [], books: [] } }]);
    });

    it('folds the books of every version, from events written before bookIds too', () => {
      // `started` has only bookId, as events of the release before several books
      expect(fold([started])).toMatchObject({ bookId: 'b1', bookIds: ['b1'] });
      const changed: ConversationEvent = {
        type: 'SourcesChanged',
        data: { bookIds: ['b2', 'b3'], books: books('b2', 'b3') },
      };
      expect(fold([started, changed])).toMatchObject({ bookId: 'b2', bookIds: ['b2', 'b3'] });
      const none: ConversationEvent = { type: 'SourcesChanged', data: { bookIds: [], books: [] } };
      expect(fold([started, changed, none])).toMatchObject({ bookId: null, bookIds: [] });
    });
  });

  describe('ChangePolicy', () => {
    const change = (policy: object): ConversationCommand => ({ type: 'ChangePolicy', userId: alice, policy });
    const changed = (policy: object): ConversationEvent => ({ type: 'PolicyChanged', data: { policy } });

    it('records the whole policy in force after the change', () => {
      given([started])
        .when(change({ model: 'claude-haiku-4-5', maxIterations: 2 }))
        .then([changed({ model: 'claude-haiku-4-5', maxIterations: 2 })]);
      given([started, changed({ model: 'claude-haiku-4-5' })])
        .when(change({ instructions: 'Answer in French.' }))
        .then([changed({ model: 'claude-haiku-4-5', instructions: 'Answer in French.' })]);
    });

    it('returns a field set to null to the server default, and records nothing when nothing changes', () => {
      given([started, changed({ model: 'claude-haiku-4-5', maxIterations: 2 })])
        .when(change({ model: null }))
        .then([changed({ maxIterations: 2 })]);
      given([started, changed({ maxIterations: 2 })])
        .when(change({ maxIterations: 2, model: null }))
        .then([]);
      given([started]).when(change({})).then([]);
    });

    it("is refused for someone else's conversation", () => {
      given([started])
        .when({ type: 'ChangePolicy', userId: 'mallory', policy: { maxIterations: 1 } })
        .thenFails('not_found');
    });

    it('folds into the state: the policy of each version', () => {
      const events = [started, changed({ maxIterations: 2 }), changed({ retrievalMode: 'always-retrieve' })];
      expect(fold(events.slice(0, 1)).policy).toEqual({});
      expect(fold(events.slice(0, 2)).policy).toEqual({ maxIterations: 2 });
      expect(fold(events).policy).toEqual({ retrievalMode: 'always-retrieve' });
    });
  });

  it('starts a conversation once', () => {
    const start: ConversationCommand = {
      type: 'StartConversation',
      userId: alice,
      bookIds: ['b1'],
      title: null,
      readingPosition: null,
    };
    given([])
      .when(start)
      .then([{ ...started, data: { ...started.data, bookIds: ['b1'] } } as ConversationEvent]);
    given([started]).when(start).thenFails('already_exists');
  });

  it("hides another user's conversation as not found", () => {
    given([started]).when({ type: 'RenameConversation', userId: 'bob', title: 'x' }).thenFails('not_found');
    given([]).when(post('t1')).thenFails('not_found');
  });

  it('renames, and a rename to the same title changes nothing', () => {
    given([started])
      .when({ type: 'RenameConversation', userId: alice, title: 'Tea' })
      .then([{ type: 'ConversationRenamed', data: { title: 'Tea' } }]);
    given([started, { type: 'ConversationRenamed', data: { title: 'Tea' } }])
      .when({ type: 'RenameConversation', userId: alice, title: 'Tea' })
      .then([]);
  });

  it('moves the reading position', () => {
    given([started])
      .when({ type: 'ChangeReadingPosition', userId: alice, readingPosition: 3 })
      .then([{ type: 'ReadingPositionChanged', data: { readingPosition: 3 } }]);
  });

  it('posts a message as a new turn; while a turn runs, enqueue is the default', () => {
    const expected = {
      type: 'UserMessagePosted',
      data: { messageId: 'm-t1', turnId: 't1', content: 'Why is a raven like a writing-desk?' },
    };
    given([started])
      .when(post('t1'))
      .then([expected as ConversationEvent]);
    given([started, posted('t0')])
      .when(post('t1'))
      .then([expected as ConversationEvent]);
  });

  it('rejects a post while a turn runs with multitask=reject', () => {
    given([started, posted('t0')])
      .when(post('t1', 'reject'))
      .thenFails('turn_in_progress');
    given([
      started,
      posted('t0'),
      { type: 'TurnFailed', data: { turnId: 't0', code: 'x', message: 'x', retryable: true } },
    ])
      .when(post('t1', 'reject'))
      .then([expect.objectContaining({ type: 'UserMessagePosted' })]);
  });

  it('cancels the running turn first with multitask=interrupt', () => {
    given([started, posted('t0')])
      .when(post('t1', 'interrupt'))
      .then([
        { type: 'TurnCancelled', data: { turnId: 't0' } },
        expect.objectContaining({ type: 'UserMessagePosted' }),
      ]);
  });

  it('cancels a pending turn; cancelling a finished one changes nothing', () => {
    given([started, posted('t0')])
      .when({ type: 'CancelTurn', userId: alice, turnId: 't0' })
      .then([{ type: 'TurnCancelled', data: { turnId: 't0' } }]);
    given([started, posted('t0'), { type: 'TurnCancelled', data: { turnId: 't0' } }])
      .when({ type: 'CancelTurn', userId: alice, turnId: 't0' })
      .then([]);
    given([started]).when({ type: 'CancelTurn', userId: alice, turnId: 'nope' }).thenFails('turn_not_found');
  });

  it("erases the owner's conversation into its tombstone, after which every command is not found", () => {
    const erase = (userId: string | null) => ({
      type: 'EraseConversation' as const,
      userId,
      subject: 'conversation' as const,
    });
    given([started, posted('t1')])
      .when(erase(alice))
      .then([{ type: 'ConversationErased', data: { erasedEvents: 2, subject: 'conversation' } }]);
    given([started]).when(erase('mallory')).thenFails('not_found');
    given([started]).when(erase(null)).thenFails('not_found'); // the system erases only what a reader deleted
    const erased = { type: 'ConversationErased' as const, data: { erasedEvents: 1, subject: 'conversation' as const } };
    given([erased]).when(post('t1')).thenFails('not_found');
    given([erased]).when(erase(alice)).thenFails('not_found');
  });

  it('erases a conversation a release before erasure deleted, for its owner or the system', () => {
    const deleted = { type: 'ConversationDeleted' as const, data: {} };
    given([started, deleted]).when(post('t1')).thenFails('not_found');
    given([started, deleted])
      .when({ type: 'EraseConversation', userId: null, subject: 'conversation' })
      .then([{ type: 'ConversationErased', data: { erasedEvents: 2, subject: 'conversation' } }]);
  });
});

describe(fold.name, () => {
  it('tracks turns in posting order and their endings', () => {
    const state = fold([started, posted('t1'), posted('t2'), { type: 'TurnCancelled', data: { turnId: 't1' } }]);
    expect(state.version).toBe(4);
    expect(state.turns.map((t) => [t.turnId, t.status])).toEqual([
      ['t1', 'cancelled'],
      ['t2', 'pending'],
    ]);
    expect(initialState().version).toBe(0);
  });

  it('titles an untitled conversation from its first message', () => {
    expect(fold([started, posted('t1', 'Who is the Cheshire Cat?')]).title).toBe('Who is the Cheshire Cat?');
    expect(fold([started, posted('t1', 'one'), posted('t2', 'two')]).title).toBe('one');
  });
});

describe(titleFromMessage.name, () => {
  it('cuts at a word boundary within 60 characters', () => {
    const long = 'Why did the Queen of Hearts keep shouting off with their heads at every single croquet player?';
    const title = titleFromMessage(long);
    expect(title.length).toBeLessThanOrEqual(60);
    expect(long.startsWith(title.slice(0, -1))).toBe(true);
    expect(title.endsWith('…')).toBe(true);
    expect(title.slice(0, -1)).not.toMatch(/\s$/);
  });
});

describe('isConversationCommand', () => {
  it('knows every conversation command and nothing else (a handler without a decider refuses the rest)', () => {
    expect(isConversationCommand({ type: 'PostUserMessage' })).toBe(true);
    expect(isConversationCommand({ type: 'EraseConversation' })).toBe(true);
    expect(isConversationCommand({ type: 'RecordModelReply' })).toBe(false);
  });
});
