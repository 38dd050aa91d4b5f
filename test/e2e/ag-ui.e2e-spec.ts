import { randomUUID } from 'node:crypto';
import { BaseEvent, EventType, HttpAgent, Message } from '@ag-ui/client';
import { Envelope, expectEvent, turnOf } from '../support/api';
import { bookModel } from '../support/fake-anthropic/book-model';
import { clientFor } from '../support/stack';
import { useReaderStack } from '../support/use-stack';
import { waitFor } from '../support/wait-for';

/** AG-UI's own client (@ag-ui/client's HttpAgent) against POST /v1/ag-ui. */
describe('AG-UI at /v1/ag-ui (e2e, the HttpAgent against the real stack)', () => {
  const s = useReaderStack({ fake: { defaultResponder: bookModel } });

  const agentFor = (threadId: string, text: string, token = s.alice.token) =>
    new HttpAgent({
      url: `${s.stack.base}/v1/ag-ui`,
      headers: { authorization: `Bearer ${token}` },
      threadId,
      initialMessages: [{ id: randomUUID(), role: 'user', content: text } as Message],
    });

  /** Runs the agent, keeping every event it saw (and the run's error, if it failed). */
  async function run(agent: HttpAgent) {
    const events: BaseEvent[] = [];
    const outcome = await agent
      .runAgent({ runId: randomUUID() }, { onEvent: ({ event }) => void events.push(event) })
      .then((r) => ({ result: r.result as any, error: undefined }))
      .catch((error: Error) => ({ result: undefined, error }));
    return { events, ...outcome };
  }
  const ofType = (events: BaseEvent[], type: EventType) => events.filter((e) => e.type === type) as any[];
  const endingOf = (log: Envelope[], turnId: string) =>
    log.find((e) => turnOf(e) === turnId && ['AssistantReplied', 'TurnFailed', 'TurnCancelled'].includes(e.type));

  it('runs a turn as the log records it: text, the search_book call and its result, the citations in the result', async () => {
    const id = await s.conversation();
    const agent = agentFor(id, 'What did Marisol carry?');
    const warnings = jest.spyOn(console, 'warn');
    const { events, result, error } = await run(agent);
    warnings.mockRestore();
    expect(error).toBeUndefined();
    const log = await s.events(id);
    const posted = expectEvent(
      log.find((e) => e.type === 'UserMessagePosted'),
      'UserMessagePosted',
    );
    expect(posted.data.content).toBe('What did Marisol carry?');
    const replied = expectEvent(endingOf(log, posted.data.turnId), 'AssistantReplied');
    const invoked = expectEvent(
      log.find((e) => e.type === 'ToolInvoked'),
      'ToolInvoked',
    );
    const recorded = expectEvent(
      log.find((e) => e.type === 'ToolResultRecorded'),
      'ToolResultRecorded',
    );

    expect(events[0]).toMatchObject({ type: EventType.RUN_STARTED, threadId: id });
    expect(events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, threadId: id });
    // the client's enforcement found nothing outside the protocol to strip from what Parley sent
    expect(warnings.mock.calls.flat().join('\n')).not.toMatch(/unrecognised|unrecognized/i);
    expect(ofType(events, EventType.TOOL_CALL_START)).toEqual([
      expect.objectContaining({ toolCallId: invoked.data.toolUseId, toolCallName: 'search_book' }),
    ]);
    const args = ofType(events, EventType.TOOL_CALL_ARGS)
      .map((e) => e.delta)
      .join('');
    expect(JSON.parse(args)).toEqual(invoked.data.input);
    expect(ofType(events, EventType.TOOL_CALL_RESULT)).toEqual([
      expect.objectContaining({ toolCallId: recorded.data.toolUseId, content: recorded.data.content }),
    ]);
    const text = ofType(events, EventType.TEXT_MESSAGE_CONTENT)
      .map((e) => e.delta)
      .join('');
    expect(text).toBe(replied.data.content);
    expect(result).toMatchObject({ turnId: posted.data.turnId, messageId: replied.data.messageId });
    expect(result.citations.map((c: any) => c.chunkId)).toEqual(replied.data.citations.map((c) => c.chunkId));

    // the agent's own messages, as a front end shows them: the question, the tool call, its result, the answer
    const assistant = agent.messages.filter((m) => m.role === 'assistant');
    expect(assistant.map((m) => m.content ?? '').join('')).toBe(replied.data.content);
    expect(assistant.flatMap((m: any) => m.toolCalls ?? [])).toEqual([
      expect.objectContaining({
        id: invoked.data.toolUseId,
        function: expect.objectContaining({ name: 'search_book' }),
      }),
    ]);
    expect(agent.messages.find((m) => m.role === 'tool')).toMatchObject({ toolCallId: recorded.data.toolUseId });

    // the next run sends the whole thread (the tool call, its result, the answer): only its last message is posted
    agent.addMessage({ id: randomUUID(), role: 'user', content: 'And after that?' } as Message);
    const next = await run(agent);
    expect(next.error).toBeUndefined();
    const posts = (await s.events(id)).filter((e) => e.type === 'UserMessagePosted');
    expect(posts.map((e) => (e.data as { content: string }).content)).toEqual([
      'What did Marisol carry?',
      'And after that?',
    ]);
  });

  it('ends a failed turn with RUN_ERROR', async () => {
    const id = await s.conversation();
    const { events } = await run(agentFor(id, 'Please FAIL'));
    const failed = expectEvent(
      (await s.events(id)).find((e) => e.type === 'TurnFailed'),
      'TurnFailed',
    );
    expect(events.at(-1)).toMatchObject({
      type: EventType.RUN_ERROR,
      code: failed.data.code,
      message: failed.data.message,
    });
  });

  it('cancels the turn when the run is aborted (TurnCancelled)', async () => {
    const id = await s.conversation();
    const agent = agentFor(id, 'Tell it SLOW');
    let streaming!: () => void;
    const answerStreams = new Promise<void>((r) => (streaming = r));
    const running = agent
      .runAgent({ runId: randomUUID() }, { onTextMessageContentEvent: () => streaming() })
      .catch(() => undefined);
    await answerStreams;
    agent.abortRun();
    await running;
    await waitFor('the turn to be cancelled', async () => (await s.events(id)).some((e) => e.type === 'TurnCancelled'));
    expect((await s.events(id)).filter((e) => e.type === 'AssistantReplied')).toEqual([]);
  });

  it('finishes the run as cancelled when the turn is cancelled elsewhere (POST …/cancel)', async () => {
    const id = await s.conversation();
    const agent = agentFor(id, 'Tell it SLOW');
    const events: BaseEvent[] = [];
    let cancelled: Promise<unknown> | undefined;
    await agent.runAgent(
      { runId: randomUUID() },
      {
        onEvent: ({ event }) => void events.push(event),
        onTextMessageContentEvent: () => {
          cancelled ??= s.events(id).then((log) => {
            const turnId = turnOf(log.find((e) => e.type === 'UserMessagePosted')!);
            return s.alice.req('POST', `/v1/conversations/${id}/turns/${turnId}/cancel`);
          });
        },
      },
    );
    expect(((await cancelled) as { status: number }).status).toBe(202);
    expect(events.at(-1)).toMatchObject({ type: EventType.RUN_FINISHED, outcome: { type: 'cancelled' } });
  });

  it('refuses without a token (401), on another reader’s conversation (404), and a malformed body (400)', async () => {
    const id = await s.conversation();
    const input = {
      threadId: id,
      runId: randomUUID(),
      messages: [{ id: 'm1', role: 'user', content: 'hi' }],
      tools: [],
      context: [],
    };
    const noToken = await fetch(`${s.stack.base}/v1/ag-ui`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(input),
    });
    expect(noToken.status).toBe(401);

    const bob = clientFor(s.stack.base, `reader-${randomUUID()}`);
    const { error } = await run(agentFor(id, 'Whose is this?', bob.token));
    expect(String(error)).toMatch(/404/);
    expect((await bob.req('POST', '/v1/ag-ui', input)).body).toMatchObject({
      status: 404,
      code: 'conversation_not_found',
    });
    expect((await s.events(id)).filter((e) => e.type === 'UserMessagePosted')).toEqual([]);

    // the reader's budget holds as for any post: a token with none left gets the problem, not a run
    const broke = clientFor(s.stack.base, s.alice.userId, { claims: { parley_budget_usd_per_month: 0 } });
    const overBudget = await broke.req('POST', '/v1/ag-ui', input);
    expect([overBudget.status, overBudget.body?.code]).toEqual([402, 'budget_exceeded']);
    expect((await s.events(id)).filter((e) => e.type === 'UserMessagePosted')).toEqual([]);

    for (const [body, field] of [
      [{ ...input, threadId: undefined }, 'threadId'],
      [{ ...input, threadId: 'not-a-uuid' }, 'threadId'],
      [{ ...input, messages: 'hi' }, 'messages'],
      [{ ...input, messages: [{ id: 'm1', role: 'assistant', content: 'hi' }] }, 'messages'],
      [{ ...input, messages: [] }, 'messages'],
      [[1, 2], 'body'],
    ] as const) {
      const r = await s.alice.req('POST', '/v1/ag-ui', body);
      expect([r.status, r.body?.code, r.body?.errors?.[0]?.field]).toEqual([400, 'validation_failed', field]);
    }
  });
});
