import { randomUUID } from 'node:crypto';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult, Progress } from '@modelcontextprotocol/sdk/types.js';
import { TURN_ENDING_TYPES } from '@parley/conversation';
import { Envelope, expectOk, turnOf } from '../support/api';
import { FakeReply, RecordedRequest } from '../support/fake-anthropic/fake-anthropic.server';
import { questionOf } from '../support/fake-anthropic/questions';
import { clientFor, startStack, Stack, tokenFor } from '../support/stack';
import { useReaderStack } from '../support/use-stack';
import { waitFor } from '../support/wait-for';

/** The fake model: searches the book once, then answers citing [1]; a SLOW question streams for seconds. */
function model(req: RecordedRequest): FakeReply {
  const msgs = req.body.messages;
  const last = msgs[msgs.length - 1];
  const hasResults = Array.isArray(last.content) && last.content.some((b: any) => b.type === 'tool_result');
  const q = questionOf(req);
  const toolsAllowed = req.body.tools?.length && req.body.tool_choice?.type !== 'none';
  if (!hasResults && toolsAllowed)
    return { content: [{ type: 'tool_use', name: 'search_book', input: { query: q.replace(/\W+/g, ' ').trim() } }] };
  if (q.includes('SLOW')) return { content: [{ type: 'text', text: 'word '.repeat(400) }], delayMsPerChunk: 50 };
  return { content: [{ type: 'text', text: `The book says she carried a brass telescope. [1]` }] };
}

/** The MCP SDK's own client on the API's /mcp, as Claude Code connects with `--header "Authorization: Bearer …"`. */
async function mcpClient(base: string, token?: string, viaFetch?: typeof fetch): Promise<McpClient> {
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
    requestInit: token ? { headers: { authorization: `Bearer ${token}` } } : {},
    fetch: viaFetch,
  });
  const client = new McpClient({ name: 'parley-e2e', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

const structured = (r: unknown) => (r as CallToolResult).structuredContent as any;
const text = (r: unknown) => ((r as CallToolResult).content[0] as { text: string }).text;

describe('MCP server at /mcp (e2e, the SDK client against the real stack)', () => {
  // two API replicas: /mcp is stateless, and a cancel may reach another replica than its ask
  const s = useReaderStack({ apis: 2, fake: { defaultResponder: model }, env: { LLM_MODEL: 'claude-sonnet-5-5' } });
  const clients: McpClient[] = [];
  const connect = async (token?: string, viaFetch?: typeof fetch) => {
    const c = await mcpClient(s.stack.base, token, viaFetch);
    clients.push(c);
    return c;
  };
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
  });
  const events = async (id: string): Promise<Envelope[]> =>
    expectOk(await s.alice.api.GET('/v1/conversations/{id}/events', { params: { path: { id } } })).items;

  it('lists its tools and the reader’s books', async () => {
    const alice = await connect(s.alice.token);
    const { tools } = await alice.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['ask', 'list_books', 'list_conversations', 'search_book']);
    expect(tools.find((t) => t.name === 'ask')!.inputSchema.required).toEqual(['question']);

    const books = await alice.callTool({ name: 'list_books', arguments: {} });
    expect(books.isError).toBeFalsy();
    expect(structured(books).books).toEqual([
      expect.objectContaining({ id: s.bookId, title: 'The Lighthouse Keeper', status: 'ready' }),
    ]);
    expect(text(books)).toContain(s.bookId);
  });

  it('searches a book: passages with their chapter', async () => {
    const alice = await connect(s.alice.token);
    const found = await alice.callTool({ name: 'search_book', arguments: { bookId: s.bookId, query: 'telescope' } });
    expect(found.isError).toBeFalsy();
    const [first] = structured(found).results;
    expect(first).toMatchObject({
      chapter: expect.stringContaining('Arrival'),
      passage: expect.stringContaining('telescope'),
    });
    expect(text(found)).toContain('brass telescope');
  });

  it('asks a question: progress while the turn runs, then the answer with its citations; the next ask continues it', async () => {
    const alice = await connect(s.alice.token);
    const progress: Progress[] = [];
    const asked = await alice.callTool(
      { name: 'ask', arguments: { question: 'What did Marisol carry?', bookId: s.bookId } },
      undefined,
      { onprogress: (p) => progress.push(p) },
    );
    expect(asked.isError).toBeFalsy();
    const answer = structured(asked);
    expect(answer).toMatchObject({
      status: 'answered',
      answer: expect.stringContaining('brass telescope'),
      citations: [expect.objectContaining({ n: 1, chapter: expect.stringContaining('Arrival') })],
    });
    expect(text(asked)).toContain('[1] Chapter 1');
    const messages = progress.map((p) => p.message);
    expect(messages).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^asked in conversation/),
        expect.stringMatching(/^searching the book for/),
        expect.stringMatching(/^found \d+ passages/),
      ]),
    );
    expect(progress.map((p) => p.progress)).toEqual(progress.map((_, i) => i + 1)); // rising, as MCP requires

    // the turn is the API's own: in the log as an HTTP post's turn, on the book, titled with the question
    const { conversationId, turnId } = answer;
    const log = await events(conversationId);
    expect(log.map((e) => e.type)).toEqual([
      'ConversationStarted',
      'UserMessagePosted',
      'ToolInvoked',
      'ToolResultRecorded',
      'AssistantReplied',
    ]);
    expect(log[0].data).toMatchObject({ bookIds: [s.bookId], title: 'What did Marisol carry?' });
    expect(turnOf(log[4])).toBe(turnId);

    const next = await alice.callTool({ name: 'ask', arguments: { question: 'And after that?', conversationId } });
    expect(structured(next)).toMatchObject({ status: 'answered', conversationId });
    expect((await events(conversationId)).filter((e) => e.type === 'AssistantReplied')).toHaveLength(2);

    // conversations: the tool, the resource list and the transcript
    await waitFor('the read model to list it', async () => {
      const listed = await alice.callTool({ name: 'list_conversations', arguments: {} });
      return structured(listed).conversations.some((c: any) => c.id === conversationId && c.messageCount === 4);
    });
    const { resources } = await alice.listResources();
    const uri = `parley://conversations/${conversationId}`;
    expect(resources).toEqual(
      expect.arrayContaining([expect.objectContaining({ uri, name: 'What did Marisol carry?' })]),
    );
    const read = await alice.readResource({ uri });
    const transcript = (read.contents[0] as { text: string }).text;
    expect(transcript).toContain('What did Marisol carry?');
    expect(transcript).toContain('And after that?');
    expect(transcript).toContain('brass telescope');
  });

  /** Asks a slow question, cancels the request while the answer streams, and checks the turn was cancelled. */
  async function cancelsTheTurn(label: string, viaFetch?: typeof fetch): Promise<void> {
    const alice = await connect(s.alice.token, viaFetch);
    const clientErrors: Error[] = [];
    alice.onerror = (e) => clientErrors.push(e);
    const abortedBefore = s.fake.aborted;
    const controller = new AbortController();
    let asked: string | undefined;
    const slow = `SLOW ${label}: tell me everything`;
    const call = alice.callTool({ name: 'ask', arguments: { question: slow, bookId: s.bookId } }, undefined, {
      signal: controller.signal,
      onprogress: (p) => {
        asked ??= /^asked in conversation (\S+) \(turn (\S+)\)/.exec(p.message ?? '')?.[0];
      },
    });
    call.catch(() => undefined);
    await waitFor('the slow answer to stream', () =>
      s.fake.requests.some((r) => questionOf(r) === slow && hasToolResult(r)),
    );
    controller.abort('the reader stopped it');
    await expect(call).rejects.toThrow(/stopped it/);
    const [, conversationId, turnId] = /^asked in conversation (\S+) \(turn (\S+)\)/.exec(asked!)!;
    const ending = await waitFor('the turn to end', async () =>
      (await events(conversationId)).find((e) => TURN_ENDING_TYPES.includes(e.type) && turnOf(e) === turnId),
    );
    expect(ending.type).toBe('TurnCancelled');
    await waitFor('the fake to see the model call aborted', () => s.fake.aborted > abortedBefore, 5_000);
    const view = expectOk(
      await s.alice.api.GET('/v1/conversations/{id}', { params: { path: { id: conversationId } } }),
    );
    expect(view.turns).toEqual([expect.objectContaining({ turnId, status: 'cancelled' })]);
    // MCP: the cancelled request gets no answer (a late one would be an unknown id to the client);
    // a progress notification sent while the cancel was on its way may still arrive, as MCP allows
    await new Promise((r) => setTimeout(r, 300));
    expect(clientErrors.filter((e) => !/progress notification for an unknown token/.test(e.message))).toEqual([]);
  }

  it("caps search_book's query as HTTP search caps q (500 characters), and sends nothing longer to be searched", async () => {
    const alice = await connect(s.alice.token);
    const refused = await alice
      .callTool({ name: 'search_book', arguments: { bookId: s.bookId, query: 'telescope '.repeat(60) } })
      .catch((e: Error) => ({ isError: true, content: [{ type: 'text', text: e.message }] }));
    expect(refused.isError).toBe(true);
    expect(JSON.stringify(refused.content)).toMatch(/500|too_big|at most/i);
  });

  it('answers a re-sent ask (same session, same JSON-RPC id) with its first turn: one conversation, one paid turn', async () => {
    const rpc = async (body: object, sessionId?: string) => {
      const res = await fetch(`${s.stack.base}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${s.alice.token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...(sessionId ? { 'mcp-session-id': sessionId } : {}),
        },
        body: JSON.stringify({ jsonrpc: '2.0', ...body }),
      });
      const raw = await res.text();
      // a JSON answer, or the last JSON-RPC message of an SSE stream (progress comes before it)
      const messages = res.headers.get('content-type')?.includes('text/event-stream')
        ? raw.split('\n').flatMap((l) => (l.startsWith('data: ') ? [JSON.parse(l.slice(6))] : []))
        : [JSON.parse(raw)];
      return { sessionId: res.headers.get('mcp-session-id'), result: messages.find((m) => 'result' in m)?.result };
    };
    const { sessionId } = await rpc({
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'retrying', version: '1' } },
    });
    expect(sessionId).toBeTruthy();
    const question = `Who kept the lamp? ${Date.now()}`;
    const ask = { id: 7, method: 'tools/call', params: { name: 'ask', arguments: { question, bookId: s.bookId } } };
    const first = (await rpc(ask, sessionId!)).result.structuredContent;
    const again = (await rpc(ask, sessionId!)).result.structuredContent;
    expect(first.status).toBe('answered');
    expect(again).toMatchObject({ conversationId: first.conversationId, turnId: first.turnId });
    // the list is the read model: it shows the conversation once the projection has caught up
    const titledNow = async () =>
      expectOk(await s.alice.api.GET('/v1/conversations', { params: { query: { limit: 100 } } })).items.filter(
        (c: { title: string | null }) => c.title === question,
      );
    await waitFor('the conversation in the list', async () => (await titledNow()).length > 0);
    expect(await titledNow()).toHaveLength(1);
    const posts = (await events(first.conversationId)).filter((e) => e.type === 'UserMessagePosted');
    expect(posts).toHaveLength(1);
    // the model answered the question once: every call for it belongs to the one turn
    const calls = s.fake.requests.filter((r: RecordedRequest) => JSON.stringify(r.body.messages).includes(question));
    expect(calls.length).toBeGreaterThan(0);
    expect(calls.length).toBeLessThanOrEqual(2);
  });

  it('cancels the turn when the request is cancelled (TurnCancelled, the model call aborted)', async () => {
    await cancelsTheTurn('here');
  });

  it('cancels the turn when the cancel reaches another API replica than the ask', async () => {
    const [first, second] = s.stack.apis;
    let cancelsRouted = 0;
    // a load balancer that sends the notifications/cancelled request to the other replica
    const balancer: typeof fetch = (url, init) => {
      const cancel = typeof init?.body === 'string' && init.body.includes('"notifications/cancelled"');
      if (cancel) cancelsRouted++;
      return fetch(cancel ? String(url).replace(first.base, second.base) : url, init);
    };
    await cancelsTheTurn('elsewhere', balancer);
    expect(cancelsRouted).toBe(1);
  });

  it('cancels the turn when the cancel comes before the turn is posted', async () => {
    const alice = await connect(s.alice.token);
    const controller = new AbortController();
    const slow = `SLOW at once ${randomUUID()}`;
    const call = alice.callTool({ name: 'ask', arguments: { question: slow, bookId: s.bookId } }, undefined, {
      signal: controller.signal,
    });
    call.catch(() => undefined);
    setImmediate(() => controller.abort('changed my mind')); // the cancel follows the request at once
    await expect(call).rejects.toThrow(/changed my mind/);
    // the ask went on to start its conversation and post; the cancel it met ends the turn
    const conversationId = await waitFor('the conversation to be listed', async () => {
      const { items } = expectOk(await s.alice.api.GET('/v1/conversations', { params: { query: { limit: 100 } } }));
      return items.find((c) => c.title === slow)?.id;
    });
    const ending = await waitFor('the turn to end', async () =>
      (await events(conversationId)).find((e) => TURN_ENDING_TYPES.includes(e.type)),
    );
    expect(ending.type).toBe('TurnCancelled');
  });

  it('is refused without a valid token, as the HTTP API is', async () => {
    await expect(mcpClient(s.stack.base)).rejects.toThrow(/401/);
    await expect(mcpClient(s.stack.base, tokenFor('x', { secret: 'another-secret-'.repeat(3) }))).rejects.toThrow(
      /401/,
    );
    const r = await fetch(`${s.stack.base}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(r.status).toBe(401);
    expect(await r.json()).toMatchObject({ code: 'token_missing' });
  });

  it("shows a reader none of another reader's books or conversations", async () => {
    const alice = await connect(s.alice.token);
    const asked = structured(
      await alice.callTool({ name: 'ask', arguments: { question: 'Who is the ferryman?', bookId: s.bookId } }),
    );
    const bob = await connect(clientFor(s.stack.base, `reader-${randomUUID()}`).token);

    expect(structured(await bob.callTool({ name: 'list_books', arguments: {} })).books).toEqual([]);
    expect(structured(await bob.callTool({ name: 'list_conversations', arguments: {} })).conversations).toEqual([]);
    expect((await bob.listResources()).resources).toEqual([]);

    const search = await bob.callTool({ name: 'search_book', arguments: { bookId: s.bookId, query: 'telescope' } });
    expect(search.isError).toBe(true);
    expect(structured(search)).toMatchObject({ code: 'book_not_found' });
    const onHerBook = await bob.callTool({ name: 'ask', arguments: { question: 'Hi?', bookId: s.bookId } });
    expect(structured(onHerBook)).toMatchObject({ code: 'book_not_found' });
    const inHerConversation = await bob.callTool({
      name: 'ask',
      arguments: { question: 'Hi?', conversationId: asked.conversationId },
    });
    expect(structured(inHerConversation)).toMatchObject({ code: 'conversation_not_found' });
    await expect(bob.readResource({ uri: `parley://conversations/${asked.conversationId}` })).rejects.toThrow(
      /not found/i,
    );
    // her conversation is as she left it: bob's ask appended nothing
    expect((await events(asked.conversationId)).filter((e) => e.type === 'UserMessagePosted')).toHaveLength(1);
  });

  it("holds an ask to the reader's budget, as a post is", async () => {
    const broke = clientFor(s.stack.base, s.alice.userId, { claims: { parley_budget_usd_per_month: 0 } });
    const client = await connect(broke.token);
    const asked = await client.callTool({ name: 'ask', arguments: { question: 'Anything?', bookId: s.bookId } });
    expect(asked.isError).toBe(true);
    expect(structured(asked)).toMatchObject({ code: 'budget_exceeded' });
    // refused before anything was recorded: no conversation was started for it
    const { items } = expectOk(await s.alice.api.GET('/v1/conversations', { params: { query: { limit: 100 } } }));
    expect(items.filter((c) => c.title === 'Anything?')).toEqual([]);
  });

  it('refuses an empty or blank question, and bookId with conversationId, with validation_failed', async () => {
    const alice = await connect(s.alice.token);
    for (const question of ['', '   ']) {
      const asked = await alice.callTool({ name: 'ask', arguments: { question, bookId: s.bookId } });
      expect(asked.isError).toBe(true);
      expect(structured(asked)).toMatchObject({ code: 'validation_failed' });
    }
    const both = await alice.callTool({
      name: 'ask',
      arguments: { question: 'Which?', bookId: s.bookId, conversationId: randomUUID() },
    });
    expect(structured(both)).toMatchObject({ code: 'validation_failed' });
  });
});

describe('MCP_ENABLED=false', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ workers: 0, env: { MCP_ENABLED: 'false' } });
  }, 60_000);
  afterAll(async () => stack?.stop());

  it('answers 404 at /mcp, with or without a token', async () => {
    const token = tokenFor(`reader-${randomUUID()}`);
    for (const headers of [{}, { authorization: `Bearer ${token}` }] as Array<Record<string, string>>) {
      const r = await fetch(`${stack.base}/mcp`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      expect(r.status).toBe(404);
    }
    await expect(mcpClient(stack.base, token)).rejects.toThrow(/404/);
  });
});

/** A model call made after the search (the answer being written). */
function hasToolResult(r: RecordedRequest): boolean {
  const last = r.body.messages.at(-1);
  return Array.isArray(last.content) && last.content.some((b: any) => b.type === 'tool_result');
}
