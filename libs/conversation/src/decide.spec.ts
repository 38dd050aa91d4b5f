import { ConversationCommand, decide, DomainError } from './decide';
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

describe(decide.name, () => {
  it('starts a conversation once', () => {
    const start: ConversationCommand = {
      type: 'StartConversation',
      userId: alice,
      bookId: 'b1',
      title: null,
      readingPosition: null,
    };
    given([]).when(start).then([started]);
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

  it('deletes, after which every command is not found', () => {
    given([started])
      .when({ type: 'DeleteConversation', userId: alice })
      .then([{ type: 'ConversationDeleted', data: {} }]);
    given([started, { type: 'ConversationDeleted', data: {} }])
      .when(post('t1'))
      .thenFails('not_found');
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
