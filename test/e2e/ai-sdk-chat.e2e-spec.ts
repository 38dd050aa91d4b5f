import { randomUUID } from 'node:crypto';
import { DefaultChatTransport, readUIMessageStream, UIMessage, UIMessageChunk } from 'ai';
import { Envelope, expectEvent, turnOf } from '../support/api';
import { bookModel } from '../support/fake-anthropic/book-model';
import { clientFor } from '../support/stack';
import { useReaderStack } from '../support/use-stack';
import { waitFor } from '../support/wait-for';

/** The AI SDK's own client side (DefaultChatTransport, readUIMessageStream) against POST /v1/ai-sdk/chat. */
describe('AI SDK UI message stream at /v1/ai-sdk/chat (e2e, the SDK transport against the real stack)', () => {
  // two API replicas: a stopping one leaves its turns running, and the other resumes them
  const s = useReaderStack({ apis: 2, fake: { defaultResponder: bookModel } });

  const transport = (token = s.alice.token, base = s.stack.base) =>
    new DefaultChatTransport<UIMessage>({
      api: `${base}/v1/ai-sdk/chat`,
      headers: { authorization: `Bearer ${token}` },
    });
  const userMessage = (text: string): UIMessage => ({
    id: randomUUID(),
    role: 'user',
    parts: [{ type: 'text', text }],
  });

  /** Sends `text` as useChat's sendMessage does, with an abort signal. */
  const send = (chatId: string, text: string, abortSignal?: AbortSignal, t = transport()) =>
    t.sendMessages({
      chatId,
      messages: [userMessage(text)],
      trigger: 'submit-message',
      messageId: undefined,
      abortSignal,
    });

  async function chunksOf(stream: ReadableStream<UIMessageChunk>): Promise<UIMessageChunk[]> {
    const chunks: UIMessageChunk[] = [];
    for await (const c of stream as unknown as AsyncIterable<UIMessageChunk>) chunks.push(c);
    return chunks;
  }

  /** The assistant message the SDK builds from the chunks, as useChat shows it. */
  async function messageOf(chunks: UIMessageChunk[]): Promise<UIMessage> {
    const stream = new ReadableStream<UIMessageChunk>({
      start(c) {
        chunks.forEach((x) => c.enqueue(x));
        c.close();
      },
    });
    let last: UIMessage | undefined;
    for await (const m of readUIMessageStream({ stream })) last = m;
    return last!;
  }

  const textOf = (m: UIMessage) => m.parts.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('');
  const endingOf = (log: Envelope[], turnId: string) =>
    log.find((e) => turnOf(e) === turnId && ['AssistantReplied', 'TurnFailed', 'TurnCancelled'].includes(e.type));

  it('streams a turn as the log records it: text, the search_book call and its result, the citations as sources', async () => {
    const id = await s.conversation();
    const chunks = await chunksOf(await send(id, 'What did Marisol carry?'));
    const log = await s.events(id);
    const posted = expectEvent(
      log.find((e) => e.type === 'UserMessagePosted'),
      'UserMessagePosted',
    );
    expect(posted.data.content).toBe('What did Marisol carry?');
    const turnId = posted.data.turnId;
    const replied = expectEvent(endingOf(log, turnId), 'AssistantReplied');
    const invoked = expectEvent(
      log.find((e) => e.type === 'ToolInvoked'),
      'ToolInvoked',
    );
    const result = expectEvent(
      log.find((e) => e.type === 'ToolResultRecorded'),
      'ToolResultRecorded',
    );

    expect(chunks[0]).toEqual({ type: 'start', messageId: turnId });
    expect(chunks.at(-1)).toEqual({ type: 'finish', finishReason: 'stop' });
    expect(chunks).toContainEqual(
      expect.objectContaining({
        type: 'tool-input-available',
        toolCallId: invoked.data.toolUseId,
        toolName: 'search_book',
        input: invoked.data.input,
      }),
    );
    const output = chunks.find((c) => c.type === 'tool-output-available');
    expect(output).toMatchObject({ toolCallId: result.data.toolUseId, output: { content: result.data.content } });

    const message = await messageOf(chunks);
    expect(message).toMatchObject({ id: turnId, role: 'assistant' });
    expect(textOf(message)).toBe(replied.data.content);
    const tool = message.parts.find((p) => p.type === 'tool-search_book') as any;
    expect(tool).toMatchObject({
      toolCallId: invoked.data.toolUseId,
      state: 'output-available',
      input: invoked.data.input,
    });
    const sources = message.parts.filter((p) => p.type === 'source-document') as any[];
    expect(replied.data.citations.length).toBeGreaterThan(0);
    expect(sources.map((p) => p.sourceId)).toEqual(replied.data.citations.map((c) => c.chunkId));
    expect(sources[0].providerMetadata.parley).toMatchObject({ chapter: replied.data.citations[0].chapter, n: 1 });
    // an ordinary turn: in the conversation's usage (a read model, projected shortly after) as any turn is
    const usage = await waitFor('the turn in the usage read model', async () => {
      const u = (await s.alice.req('GET', `/v1/conversations/${id}/usage`)).body;
      return u?.turns === 1 ? u : undefined;
    });
    expect(usage).toMatchObject({ toolCalls: 1, costUsd: replied.data.costUsd });
  });

  it('takes the whole chat as useChat sends it (the earlier answer with its tool and source parts) and posts only the last message', async () => {
    const id = await s.conversation();
    const first = userMessage('What did Marisol carry?');
    const t = transport();
    const answer = await messageOf(
      await chunksOf(
        await t.sendMessages({
          chatId: id,
          messages: [first],
          trigger: 'submit-message',
          messageId: undefined,
          abortSignal: undefined,
        }),
      ),
    );
    expect(answer.parts.map((p) => p.type)).toEqual(
      expect.arrayContaining(['tool-search_book', 'text', 'source-document']),
    );
    const next = await messageOf(
      await chunksOf(
        await t.sendMessages({
          chatId: id,
          messages: [first, answer, userMessage('And after that?')],
          trigger: 'submit-message',
          messageId: undefined,
          abortSignal: undefined,
        }),
      ),
    );
    const log = await s.events(id);
    expect(
      log.filter((e) => e.type === 'UserMessagePosted').map((e) => (e.data as { content: string }).content),
    ).toEqual(['What did Marisol carry?', 'And after that?']);
    const replies = log.filter((e) => e.type === 'AssistantReplied');
    expect(textOf(next)).toBe((replies[1].data as { content: string }).content);
  });

  it('answers with the UI message stream headers, as SSE', async () => {
    const id = await s.conversation();
    const r = await s.alice.req('POST', '/v1/ai-sdk/chat', { id, messages: [userMessage('What did Marisol carry?')] });
    expect(r.status).toBe(200);
    expect(r.headers.get('x-vercel-ai-ui-message-stream')).toBe('v1');
    expect(r.headers.get('content-type')).toContain('text/event-stream');
    expect(r.text).toContain('data: {"type":"start"');
    expect(r.text.trimEnd().endsWith('data: [DONE]')).toBe(true);
  });

  it('answers a TurnFailed with an error part', async () => {
    const id = await s.conversation();
    const chunks = await chunksOf(await send(id, 'Please FAIL'));
    const failed = expectEvent(
      (await s.events(id)).find((e) => e.type === 'TurnFailed'),
      'TurnFailed',
    );
    expect(chunks.at(-1)).toEqual({ type: 'error', errorText: `${failed.data.code}: ${failed.data.message}` });
  });

  it('resumes the turn in flight from its start (reconnectToStream), and answers 204 when none is', async () => {
    const id = await s.conversation();
    expect(await transport().reconnectToStream({ chatId: id })).toBeNull(); // 204: nothing in flight

    const first = chunksOf(await send(id, 'Tell it SLOW'));
    // the answer is being written: a second tab (or the same after a reload) reconnects
    await waitFor('the answer to be streaming', async () =>
      (await s.events(id)).some((e) => e.type === 'ToolResultRecorded'),
    );
    await new Promise((r) => setTimeout(r, 500)); // bounded: well inside the 5s answer, past its start
    const resumed = await transport().reconnectToStream({ chatId: id });
    expect(resumed).not.toBeNull();
    const [original, again] = await Promise.all([first, chunksOf(resumed!)]);

    const log = await s.events(id);
    const turnId = turnOf(log.find((e) => e.type === 'UserMessagePosted')!)!;
    const replied = expectEvent(endingOf(log, turnId), 'AssistantReplied');
    for (const chunks of [original, again]) {
      const message = await messageOf(chunks);
      expect(message.id).toBe(turnId);
      expect(textOf(message)).toBe(replied.data.content);
      expect(message.parts.some((p) => p.type === 'tool-search_book')).toBe(true);
    }
    expect(await transport().reconnectToStream({ chatId: id })).toBeNull(); // ended: nothing in flight
  });

  it('cancels the turn when the request is aborted (TurnCancelled)', async () => {
    const id = await s.conversation();
    const controller = new AbortController();
    const stream = await send(id, 'Tell it SLOW', controller.signal);
    const reader = stream.getReader();
    for (;;) {
      const { value } = await reader.read(); // until the answer streams
      if (value?.type === 'text-delta') break;
    }
    controller.abort();
    await reader.read().catch(() => undefined);
    const cancelled = await waitFor('the turn to be cancelled', async () =>
      (await s.events(id)).find((e) => e.type === 'TurnCancelled'),
    );
    expect((await s.events(id)).filter((e) => e.type === 'AssistantReplied')).toEqual([]);
    expect(cancelled.type).toBe('TurnCancelled');
  });

  it('ends the stream with an abort part when the turn is cancelled elsewhere (POST …/cancel)', async () => {
    const id = await s.conversation();
    const reader = (await send(id, 'Tell it SLOW')).getReader();
    const seen: UIMessageChunk[] = [];
    while (seen.at(-1)?.type !== 'text-delta') seen.push((await reader.read()).value!);
    const turnId = (seen[0] as { messageId: string }).messageId;
    const cancel = await s.alice.req('POST', `/v1/conversations/${id}/turns/${turnId}/cancel`);
    expect(cancel.status).toBe(202);
    for (let r = await reader.read(); !r.done; r = await reader.read()) seen.push(r.value);
    expect(seen.at(-1)).toEqual({ type: 'abort', reason: 'the turn was cancelled' });
    expect((await s.events(id)).some((e) => e.type === 'TurnCancelled')).toBe(true);
  });

  it('refuses without a token (401), on another reader’s conversation (404), and a malformed body (400)', async () => {
    const id = await s.conversation();
    const noToken = await fetch(`${s.stack.base}/v1/ai-sdk/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id, messages: [userMessage('hi')] }),
    });
    expect(noToken.status).toBe(401);
    expect(noToken.headers.get('content-type')).toContain('application/problem+json');
    expect((await fetch(`${s.stack.base}/v1/ai-sdk/chat/${id}/stream`)).status).toBe(401);

    const bob = clientFor(s.stack.base, `reader-${randomUUID()}`);
    await expect(send(id, 'Whose is this?', undefined, transport(bob.token))).rejects.toThrow(
      /conversation_not_found|404|not found/i,
    );
    expect((await bob.req('GET', `/v1/ai-sdk/chat/${id}/stream`)).status).toBe(404);
    expect((await s.events(id)).filter((e) => e.type === 'UserMessagePosted')).toEqual([]);

    for (const [body, field] of [
      [{ messages: [userMessage('hi')] }, 'id'],
      [{ id: 'not-a-uuid', messages: [userMessage('hi')] }, 'id'],
      [{ id, messages: [] }, 'messages'],
      [{ id, messages: [{ id: 'x', role: 'user', parts: [{ type: 'text' }] }] }, 'messages'],
      [{ id, messages: [{ id: 'x', role: 'assistant', parts: [{ type: 'text', text: 'hi' }] }] }, 'messages'],
      [[1, 2], 'body'],
    ] as const) {
      const r = await s.alice.req('POST', '/v1/ai-sdk/chat', body);
      expect([r.status, r.body?.code, r.body?.errors?.[0]?.field]).toEqual([400, 'validation_failed', field]);
    }
    // the reader's budget holds as for any post: a token with none left gets the problem, not a stream
    const broke = clientFor(s.stack.base, s.alice.userId, { claims: { parley_budget_usd_per_month: 0 } });
    const overBudget = await broke.req('POST', '/v1/ai-sdk/chat', { id, messages: [userMessage('hi')] });
    expect([overBudget.status, overBudget.body?.code]).toEqual([402, 'budget_exceeded']);
    expect((await s.events(id)).filter((e) => e.type === 'UserMessagePosted')).toEqual([]);

    const notJson = await s.alice.req('POST', '/v1/ai-sdk/chat', '{"id":', { 'content-type': 'application/json' });
    expect(notJson.status).toBe(400);
    expect((await s.alice.req('GET', '/v1/ai-sdk/chat/not-a-uuid/stream')).status).toBe(400);
  });

  // last: it stops the second API
  it('leaves the turn running when its API stops (a deploy), and another replica resumes it', async () => {
    const id = await s.conversation();
    const [, second] = s.stack.apis;
    const reader = (await send(id, 'Tell it SLOW', undefined, transport(s.alice.token, second.base))).getReader();
    for (;;) if ((await reader.read()).value?.type === 'text-delta') break;
    await second.kill('SIGTERM');
    // the stopping API ends the stream (with no finish: the turn is not over)
    let r: { done?: boolean };
    do r = await reader.read().catch(() => ({ done: true }));
    while (!r.done);

    const resumed = await transport().reconnectToStream({ chatId: id });
    expect(resumed).not.toBeNull();
    const message = await messageOf(await chunksOf(resumed!));
    const log = await s.events(id);
    const replied = expectEvent(
      log.find((e) => e.type === 'AssistantReplied'),
      'AssistantReplied',
    );
    expect(textOf(message)).toBe(replied.data.content);
    expect(log.some((e) => e.type === 'TurnCancelled')).toBe(false);
  });
});
