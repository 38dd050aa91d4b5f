import { randomBytes, randomUUID } from 'node:crypto';
import { AgentTool, AnthropicLlm, LiveDeltas, modelTableOf, ToolRegistry } from '@parley/agent';
import { BookShelf, BooksRepository, WholeBooks } from '@parley/books';
import { AppConfig, loadConfig } from '@parley/config';
import { ConversationEvent, conversationStreamId, DomainError, fold, handleCommand } from '@parley/conversation';
import { EventStore } from '@parley/event-store';
import { RedisConnections } from '@parley/platform';
import { AgentTurnRunner } from '../../apps/worker/src/turns/agent-turn.runner';
import { ConversationFolds } from '../../apps/worker/src/turns/conversation-folds';
import { TurnSteps } from '../../apps/worker/src/turns/turn-steps';
import { TurnBudget } from '../../apps/worker/src/turns/turn-budget';
import { conversationStarted, givenConversation, userMessagePosted } from '../support/factories/events';
import { FakeAnthropic } from '../support/fake-anthropic/fake-anthropic.server';
import { createTestDatabase, redisUrl, TestDatabase } from '../support/test-database';

/** A tool that acts on the world, so the reader is asked first: records each time it is really called. */
class PostcardTool implements AgentTool {
  readonly name = 'send_postcard';
  readonly description = 'Sends a postcard to the reader.';
  readonly needsApproval = true;
  readonly inputSchema = { type: 'object' as const, properties: { text: { type: 'string' } }, required: ['text'] };
  readonly sent: unknown[] = [];
  availableFor(): boolean {
    return true;
  }
  async run(input: unknown) {
    this.sent.push(input);
    return { content: 'The postcard is on its way.' };
  }
}

/** Approvals in process: a turn stops before a call that needs the reader, holds nothing, and goes on from the log. */
describe('tool approvals (in process, real AnthropicLlm against the fake API)', () => {
  let db: TestDatabase;
  let store: EventStore;
  let fake: FakeAnthropic;
  let redis: RedisConnections;
  let deltas: LiveDeltas;
  let tool: PostcardTool;

  beforeAll(async () => {
    db = await createTestDatabase();
    store = new EventStore(db.pool);
    fake = await FakeAnthropic.start();
    tool = new PostcardTool();
  });
  afterEach(() => {
    fake.reset();
    tool.sent.length = 0;
  });
  afterAll(async () => {
    deltas?.onApplicationShutdown();
    await redis?.onApplicationShutdown();
    await fake.close();
    await db.drop();
  });

  /** A runner as a worker builds it, with APPROVAL_TIMEOUT_MS when given. */
  function runnerWith(env: Record<string, string> = {}) {
    const config: AppConfig = loadConfig({
      NODE_ENV: 'development',
      DATABASE_URL: db.url,
      REDIS_URL: redisUrl(),
      QUEUE_PREFIX: `t-approvals-${randomBytes(4).toString('hex')}`,
      LLM_PROVIDER: 'anthropic',
      ANTHROPIC_API_KEY: 'sk-fake',
      ANTHROPIC_BASE_URL: fake.url,
      LLM_MAX_RETRIES: '0',
      LOG_LEVEL: 'silent',
      ...env,
    });
    const llm = new AnthropicLlm({
      model: config.llm.model,
      maxTokens: 1024,
      maxRetries: 0,
      apiKey: 'sk-fake',
      baseUrl: fake.url,
    });
    const prices = modelTableOf(config);
    redis ??= new RedisConnections(config);
    deltas ??= new LiveDeltas(redis, config);
    const steps = new TurnSteps(
      llm,
      new ToolRegistry([tool]),
      deltas,
      new BooksRepository(db.pool),
      config,
      new WholeBooks(db.pool, new BookShelf(db.pool)),
      new TurnBudget(store, config, prices),
    );
    const folds = new ConversationFolds(store, config, llm);
    const runner = new AgentTurnRunner(store, folds, steps, config, prices);
    const decide = (conversationId: string, userId: string, turnId: string, approved: boolean, reason?: string) =>
      handleCommand(store, folds, conversationId, [
        {
          type: 'DecideToolApproval',
          userId,
          turnId,
          toolCallId: 'toolu_card_1',
          approved,
          ...(reason ? { reason } : {}),
        },
      ]);
    return { runner, decide };
  }

  /** A question whose model asks to send a postcard, then answers after the tool's result. */
  async function givenAPostcardTurn() {
    const conversationId = randomUUID();
    const ownerId = `user-${randomUUID()}`;
    const turnId = randomUUID();
    await givenConversation(store, conversationId, [
      conversationStarted({ ownerId, title: 'Postcards' }),
      userMessagePosted({ turnId, content: 'Send me a postcard of the lighthouse.' }),
    ]);
    fake.enqueue(
      {
        content: [
          { type: 'tool_use', id: 'toolu_card_1', name: 'send_postcard', input: { text: 'Greetings from Vell' } },
        ],
      },
      { content: [{ type: 'text', text: 'Done.' }] },
    );
    return { conversationId, ownerId, turnId };
  }

  const typesOf = async (conversationId: string) =>
    (await store.readStream<ConversationEvent>(conversationStreamId(conversationId))).map((e) => e.type);
  const eventsOf = (conversationId: string) =>
    store.readStream<ConversationEvent>(conversationStreamId(conversationId));
  const run = (runner: AgentTurnRunner, conversationId: string, turnId: string) =>
    runner.run(conversationId, turnId, new AbortController().signal);

  it('stops before the call, asks once, and makes the call once when the reader approves', async () => {
    const { runner, decide } = runnerWith();
    const { conversationId, ownerId, turnId } = await givenAPostcardTurn();

    expect(await run(runner, conversationId, turnId)).toEqual({ kind: 'wait-approval' });
    expect(await typesOf(conversationId)).toEqual([
      'ConversationStarted',
      'UserMessagePosted',
      'ToolInvoked',
      'ToolApprovalRequested',
    ]);
    const asked = (await eventsOf(conversationId)).at(-1)!;
    expect(asked.data).toEqual({
      turnId,
      toolCallId: 'toolu_card_1',
      tool: 'send_postcard',
      input: { text: 'Greetings from Vell' },
    });
    expect(tool.sent).toEqual([]);
    // a worker that takes the job again meanwhile finds it waiting, and asks nothing twice
    expect(await run(runner, conversationId, turnId)).toEqual({ kind: 'wait-approval' });
    expect((await typesOf(conversationId)).filter((t) => t === 'ToolApprovalRequested')).toHaveLength(1);

    // another reader cannot answer it; an answer to a call never asked about is approval_not_found
    await expect(decide(conversationId, 'someone-else', turnId, true)).rejects.toMatchObject({ code: 'not_found' });
    await expect(
      handleCommand(store, { load: () => freshFold(conversationId) }, conversationId, [
        { type: 'DecideToolApproval', userId: ownerId, turnId, toolCallId: 'toolu_other', approved: true },
      ]),
    ).rejects.toMatchObject({ code: 'approval_not_found' });

    await decide(conversationId, ownerId, turnId, true);
    await expect(decide(conversationId, ownerId, turnId, false)).rejects.toBeInstanceOf(DomainError);
    expect(await run(runner, conversationId, turnId)).toMatchObject({ kind: 'ended' });
    expect(tool.sent).toEqual([{ text: 'Greetings from Vell' }]);
    expect(await typesOf(conversationId)).toEqual([
      'ConversationStarted',
      'UserMessagePosted',
      'ToolInvoked',
      'ToolApprovalRequested',
      'ToolApprovalDecided',
      'ToolResultRecorded',
      'AssistantReplied',
    ]);
    expect(fake.requests).toHaveLength(2); // the call that asked for the tool, and the answer: nothing bought twice
  });

  it("does not make a declined call: the model reads that it was declined, and the reader's reason", async () => {
    const { runner, decide } = runnerWith();
    const { conversationId, ownerId, turnId } = await givenAPostcardTurn();
    expect(await run(runner, conversationId, turnId)).toEqual({ kind: 'wait-approval' });
    await decide(conversationId, ownerId, turnId, false, 'not today');
    expect(await run(runner, conversationId, turnId)).toMatchObject({ kind: 'ended' });
    expect(tool.sent).toEqual([]);
    const result = (await eventsOf(conversationId)).find((e) => e.type === 'ToolResultRecorded')!;
    expect(result.data).toMatchObject({ isError: true, content: expect.stringContaining('not today') });
    const told = fake.requests[1].body.messages.at(-1).content;
    expect(JSON.stringify(told)).toContain('the reader declined it');
  });

  it('denies a request left unanswered past APPROVAL_TIMEOUT_MS, and the turn goes on', async () => {
    const { runner } = runnerWith({ APPROVAL_TIMEOUT_MS: '200' });
    const { conversationId, turnId } = await givenAPostcardTurn();
    const waiting = await run(runner, conversationId, turnId);
    expect(waiting).toEqual({ kind: 'wait-approval', until: expect.any(String) });
    const asked = (await eventsOf(conversationId)).at(-1)!.data as { expiresAt: string };
    expect(Date.parse(asked.expiresAt) - Date.now()).toBeLessThanOrEqual(200);
    await new Promise((r) => setTimeout(r, Math.max(0, Date.parse(asked.expiresAt) - Date.now()) + 20));
    expect(await run(runner, conversationId, turnId)).toMatchObject({ kind: 'ended' });
    expect(tool.sent).toEqual([]);
    const decided = (await eventsOf(conversationId)).find((e) => e.type === 'ToolApprovalDecided')!;
    expect(decided.data).toMatchObject({ approved: false, by: 'timeout' });
  });

  /** The conversation as the API's command handler would fold it: read from the log. */
  async function freshFold(conversationId: string) {
    const state = fold(await eventsOf(conversationId));
    return { version: state.version, state };
  }
});
