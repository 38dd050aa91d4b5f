import { randomBytes, randomUUID } from 'node:crypto';
import { AgentTool, AnthropicLlm, LiveDeltas, modelTableOf, ToolContext, ToolRegistry } from '@parley/agent';
import { BookShelf, BooksRepository, WholeBooks } from '@parley/books';
import { AppConfig, loadConfig } from '@parley/config';
import { AssistantTextDelta, ConversationEvent, conversationStreamId } from '@parley/conversation';
import { EventStore, StoredEvent } from '@parley/event-store';
import { RedisConnections } from '@parley/platform';
import { AgentTurnRunner } from '../../apps/worker/src/turns/agent-turn.runner';
import { ConversationFolds } from '../../apps/worker/src/turns/conversation-folds';
import { MemoryStepKeeper } from '../../apps/worker/src/turns/step-keeper';
import { TurnSteps } from '../../apps/worker/src/turns/turn-steps';
import { TurnBudget } from '../../apps/worker/src/turns/turn-budget';
import {
  assistantReplied,
  conversationRenamed,
  conversationStarted,
  givenConversation,
  userMessagePosted,
} from '../support/factories/events';
import { FakeAnthropic } from '../support/fake-anthropic/fake-anthropic.server';
import { createTestDatabase, redisUrl, TestDatabase } from '../support/test-database';

/** A tool the test owns: answers from a fixed table and records what it was asked. */
class FactsTool implements AgentTool {
  readonly name = 'lookup_fact';
  readonly description = 'Looks a fact about the story up.';
  readonly inputSchema = {
    type: 'object' as const,
    properties: { query: { type: 'string' } },
    required: ['query'],
  };
  readonly calls: Array<{ input: unknown; ctx: ToolContext }> = [];
  availableFor(): boolean {
    return true;
  }
  async run(input: unknown, ctx: ToolContext) {
    this.calls.push({ input, ctx });
    return { content: 'The lamp had been dark for nine winters.' };
  }
}

/**
 * AgentTurnRunner in process: a real EventStore and Pool on a cloned database, the real
 * AnthropicLlm against the fake Messages API, real LiveDeltas on Redis under a private prefix.
 */
describe('AgentTurnRunner (in process, real AnthropicLlm against the fake API)', () => {
  let db: TestDatabase;
  let store: EventStore;
  let fake: FakeAnthropic;
  let redis: RedisConnections;
  let deltas: LiveDeltas;
  let tool: FactsTool;
  let sut: AgentTurnRunner;
  let folds: ConversationFolds;

  beforeAll(async () => {
    db = await createTestDatabase();
    store = new EventStore(db.pool);
    fake = await FakeAnthropic.start();
    const config: AppConfig = loadConfig({
      NODE_ENV: 'development',
      DATABASE_URL: db.url,
      REDIS_URL: redisUrl(),
      QUEUE_PREFIX: `t-runner-${randomBytes(4).toString('hex')}`,
      LLM_PROVIDER: 'anthropic',
      ANTHROPIC_API_KEY: 'sk-fake',
      ANTHROPIC_BASE_URL: fake.url,
      LLM_MAX_RETRIES: '0',
      LOG_LEVEL: 'silent',
    });
    const llm = new AnthropicLlm({
      model: config.llm.model,
      maxTokens: config.llm.maxTokens,
      maxRetries: 0,
      apiKey: 'sk-fake',
      baseUrl: fake.url,
    });
    const prices = modelTableOf(config);
    redis = new RedisConnections(config);
    deltas = new LiveDeltas(redis, config);
    tool = new FactsTool();
    const books = new BooksRepository(db.pool);
    const wholeBooks = new WholeBooks(db.pool, new BookShelf(db.pool));
    const steps = new TurnSteps(
      llm,
      new ToolRegistry([tool]),
      deltas,
      books,
      config,
      wholeBooks,
      new TurnBudget(store, config, prices),
    );
    folds = new ConversationFolds(store, config, llm);
    sut = new AgentTurnRunner(store, folds, steps, config, prices);
  });
  afterEach(() => {
    fake.reset();
    tool.calls.length = 0;
  });
  afterAll(async () => {
    deltas.onApplicationShutdown();
    await redis.onApplicationShutdown();
    await fake.close();
    await db.drop();
  });

  const stream = (conversationId: string): Promise<StoredEvent<ConversationEvent>[]> =>
    store.readStream<ConversationEvent>(conversationStreamId(conversationId));

  /** Given: a conversation with one question whose turn has not started. */
  const givenAQuestion = async (content = 'How long was the lamp dark?') => {
    const conversationId = randomUUID();
    const ownerId = `user-${randomUUID()}`;
    const turnId = randomUUID();
    await givenConversation(store, conversationId, [
      conversationStarted({ ownerId, title: 'The Lighthouse Keeper' }),
      userMessagePosted({ turnId, content }),
    ]);
    return { conversationId, ownerId, turnId };
  };

  it('runs a scripted tool call and answer: ToolInvoked, ToolResultRecorded, AssistantReplied, two requests', async () => {
    // given a question, and a model that calls the tool once then answers
    const { conversationId, ownerId, turnId } = await givenAQuestion();
    fake.enqueue(
      {
        content: [
          { type: 'text', text: 'Let me check.' },
          { type: 'tool_use', id: 'toolu_lookup_1', name: 'lookup_fact', input: { query: 'lamp dark' } },
        ],
      },
      { content: [{ type: 'text', text: 'It had been dark for nine winters.' }] },
    );
    const live: AssistantTextDelta[] = [];
    const unsubscribe = deltas.subscribe(conversationId, (d) => live.push(d));
    await new Promise((r) => setTimeout(r, 100)); // the subscription reaches Redis before the first delta
    try {
      // when the turn runs
      const outcome = await sut.run(conversationId, turnId, new AbortController().signal);
      // then it ended with the scripted steps appended after the question
      expect(outcome.kind).toBe('ended');
      const events = await stream(conversationId);
      expect(events.map((e) => [e.version, e.type])).toEqual([
        [1, 'ConversationStarted'],
        [2, 'UserMessagePosted'],
        [3, 'ToolInvoked'],
        [4, 'ToolResultRecorded'],
        [5, 'AssistantReplied'],
      ]);
      const [, , invoked, result, replied] = events;
      expect(invoked.data).toMatchObject({
        turnId,
        toolUseId: 'toolu_lookup_1',
        name: 'lookup_fact',
        input: { query: 'lamp dark' },
        iteration: 1,
        assistantText: 'Let me check.',
        assistantContent: [
          { type: 'text', text: 'Let me check.' },
          { type: 'tool_use', toolUseId: 'toolu_lookup_1' },
        ],
        model: 'claude-sonnet-5-5',
      });
      expect(result.data).toEqual({
        turnId,
        toolUseId: 'toolu_lookup_1',
        content: 'The lamp had been dark for nine winters.',
        isError: false,
      });
      expect(replied.data).toMatchObject({
        turnId,
        content: 'It had been dark for nine winters.',
        stopReason: 'end_turn',
        iterations: 2,
        citations: [],
        isFromBook: false,
      });
      // each agent event names the owner, the turn, and the event it followed
      for (const e of events.slice(2)) {
        expect(e.metadata).toEqual({ userId: ownerId, correlationId: turnId, causationId: events[e.version - 2].id });
      }
      // and the tool ran once, for this conversation
      expect(tool.calls).toEqual([
        {
          input: { query: 'lamp dark' },
          ctx: expect.objectContaining({ conversationId, userId: ownerId, bookId: null, readingPosition: null }),
        },
      ]);
      // and the fake got two requests: the question with the tool offered, then the tool's result
      expect(fake.requests).toHaveLength(2);
      expect(fake.requests[0].body.tools.map((t: { name: string }) => t.name)).toEqual(['lookup_fact']);
      const second = fake.requests[1].body.messages;
      expect(second[second.length - 1].content).toEqual(
        expect.arrayContaining([expect.objectContaining({ type: 'tool_result', tool_use_id: 'toolu_lookup_1' })]),
      );
      // and the first call's text went out live; the answer, come in one batch, went out in AssistantReplied alone
      const deadline = Date.now() + 2_000;
      while (live.filter((d) => d.iteration === 1).length === 0 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 20));
      }
      await new Promise((r) => setTimeout(r, 100)); // a delta of the answer would have come by now
      expect(live.map((d) => [d.iteration, d.text])).toEqual([[1, 'Let me check.']]);
    } finally {
      unsubscribe();
    }
  });

  it('keeps the paid answer when the stream moved on meanwhile: one request, AssistantReplied after the rename', async () => {
    // given a question, and a model that answers slowly
    const { conversationId, turnId } = await givenAQuestion();
    fake.enqueue({
      content: [{ type: 'text', text: 'Nine winters, the ferryman said, and nobody had climbed the stairs since.' }],
      delayMsPerChunk: 60,
    });
    // when the turn runs and the conversation is renamed while the model is answering
    const running = sut.run(conversationId, turnId, new AbortController().signal);
    await fake.waitFor('the model request', () => fake.requests.length === 1);
    await givenConversation(store, conversationId, [conversationRenamed('Renamed midway')], 2);
    const outcome = await running;
    // then the answer was appended at the new version, after the rename, without asking again
    expect(outcome.kind).toBe('ended');
    const events = await stream(conversationId);
    expect(events.map((e) => [e.version, e.type])).toEqual([
      [1, 'ConversationStarted'],
      [2, 'UserMessagePosted'],
      [3, 'ConversationRenamed'],
      [4, 'AssistantReplied'],
    ]);
    expect(events[3].data).toMatchObject({
      turnId,
      content: 'Nine winters, the ferryman said, and nobody had climbed the stairs since.',
    });
    expect(fake.requests).toHaveLength(1);
    expect(fake.aborted).toBe(0);
  });

  it('keeps a paid answer with its command and the very events appended for it (one decision)', async () => {
    // given a question, and a model that answers at once
    const { conversationId, turnId } = await givenAQuestion();
    fake.enqueue({ content: [{ type: 'text', text: 'Nine winters.' }] });
    const keeper = new MemoryStepKeeper();
    // when the turn runs
    expect((await sut.run(conversationId, turnId, new AbortController().signal, keeper)).kind).toBe('ended');
    // then the step kept is the answer's command, with the events as they were stored (ids and metadata)
    const replied = (await stream(conversationId))[2];
    expect(replied.type).toBe('AssistantReplied');
    expect(keeper.kept).toMatchObject({ step: `${turnId}/call-llm/1`, command: { type: 'RecordModelReply', turnId } });
    expect(keeper.kept!.events.map(({ id, type, data, metadata }) => ({ id, type, data, metadata }))).toEqual([
      { id: replied.id, type: replied.type, data: replied.data, metadata: replied.metadata },
    ]);
  });

  it('reads the stream once a turn when its job read it ahead: each step after its own append starts from memory', async () => {
    // given a question, and a model that calls the tool once then answers
    const { conversationId, turnId } = await givenAQuestion();
    fake.enqueue(
      { content: [{ type: 'tool_use', id: 'toolu_lookup_2', name: 'lookup_fact', input: { query: 'lamp' } }] },
      { content: [{ type: 'text', text: 'Nine winters.' }] },
    );
    const reads = jest.spyOn(store, 'readStream');
    try {
      // when its job was taken (the conversation read ahead) and the turn runs from that read
      folds.readAhead(conversationId);
      const outcome = await sut.run(conversationId, turnId, new AbortController().signal, undefined, undefined, true);
      // then three steps were recorded on the one read
      expect(outcome.kind).toBe('ended');
      expect(reads).toHaveBeenCalledTimes(1);
    } finally {
      reads.mockRestore();
    }
    expect((await stream(conversationId)).slice(2).map((e) => e.type)).toEqual([
      'ToolInvoked',
      'ToolResultRecorded',
      'AssistantReplied',
    ]);
  });

  it('makes no request for a turn whose stream already has its AssistantReplied', async () => {
    // given a turn that already ended
    const { conversationId, turnId } = await givenAQuestion();
    await givenConversation(store, conversationId, [assistantReplied({ turnId, content: 'answered before' })], 2);
    // when it runs again (a redelivered job)
    const outcome = await sut.run(conversationId, turnId, new AbortController().signal);
    // then it is ended, with nothing asked and nothing appended
    expect(outcome.kind).toBe('ended');
    expect(fake.requests).toHaveLength(0);
    expect(tool.calls).toHaveLength(0);
    expect((await stream(conversationId)).map((e) => e.type)).toEqual([
      'ConversationStarted',
      'UserMessagePosted',
      'AssistantReplied',
    ]);
  });

  it('waits, without a request, for an earlier unended turn of the conversation', async () => {
    // given two questions, the first still unanswered
    const { conversationId, turnId: first } = await givenAQuestion();
    const second = randomUUID();
    await givenConversation(store, conversationId, [userMessagePosted({ turnId: second, content: 'And then?' })], 2);
    // when the second turn runs
    const outcome = await sut.run(conversationId, second, new AbortController().signal);
    // then it waits for the first
    expect(outcome).toEqual({ kind: 'wait', forTurnId: first, behind: 1 });
    expect(fake.requests).toHaveLength(0);
  });

  it('records what a stream broken off midway was billed, then fails the turn', async () => {
    // given a question, and a model whose stream breaks off (overloaded) after a few words
    const { conversationId, turnId } = await givenAQuestion();
    fake.enqueue({
      content: [{ type: 'text', text: 'word '.repeat(100) }],
      usage: { input_tokens: 2100 },
      breakOff: { afterDeltas: 3, type: 'overloaded_error' },
    });
    // when the turn runs (no retries left)
    await sut.run(conversationId, turnId, new AbortController().signal);
    // then the billed attempt is in the log before the failure
    const events = await stream(conversationId);
    expect(events.slice(2).map((e) => e.type)).toEqual(['ModelCallStopped', 'TurnFailed']);
    expect(events[2].data).toMatchObject({
      turnId,
      iteration: 1,
      model: 'claude-sonnet-5-5',
      reason: 'broken',
      usage: { inputTokens: 2100, outputTokens: expect.any(Number) },
    });
  });

  it('records a call aborted by a stopping worker once, and hands the turn back', async () => {
    // given a question, and a model that answers slowly
    const { conversationId, turnId } = await givenAQuestion();
    fake.enqueue({ content: [{ type: 'text', text: 'word '.repeat(200) }], delayMsPerChunk: 20 });
    const stopping = new AbortController();
    // when the worker stops while the model writes
    const run = sut.run(conversationId, turnId, stopping.signal);
    await fake.waitFor('the stream', () => fake.requests.length === 1);
    await new Promise((r) => setTimeout(r, 200));
    stopping.abort();
    // then the turn goes back to the queue, its billed call recorded as aborted
    expect(await run).toEqual({ kind: 'handed-back' });
    const events = await stream(conversationId);
    expect(events.slice(2).map((e) => [e.type, (e.data as { reason?: string }).reason])).toEqual([
      ['ModelCallStopped', 'aborted'],
    ]);
    expect((events[2].data as { usage: { inputTokens: number } }).usage.inputTokens).toBeGreaterThan(0);
    // and appending the same event again (a retried append) adds nothing
    const [again] = events.slice(2).map(({ id, type, data, metadata }) => ({ id, type, data, metadata }));
    await store.append(conversationStreamId(conversationId), [again as never], { expectedVersion: 2 });
    expect(await stream(conversationId)).toHaveLength(3);
  });
});
