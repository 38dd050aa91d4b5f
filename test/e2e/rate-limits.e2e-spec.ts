import { randomUUID } from 'node:crypto';
import Redis from 'ioredis';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { conversationStreamId } from '@parley/conversation';
import { expectOk, isEvent } from '../support/api';
import { Client, clientFor } from '../support/stack';
import { redisUrl } from '../support/test-database';
import { useReaderStack } from '../support/use-stack';
import { waitFor } from '../support/wait-for';

/**
 * Each reader's limits past which a request answers 429 rate_limited with Retry-After and
 * records nothing (docs/configuration.md, "Rate limits"), small here so the suite is quick. The
 * limits are per reader and per minute: each test has readers of its own, except alice (who
 * owns the book), whose searches, asks and streams are each tested once.
 */
const LIMITS = {
  RATE_LIMIT_FORKS_PER_MIN: '10',
  RATE_LIMIT_CONVERSATIONS_PER_MIN: '3',
  RATE_LIMIT_BATCHES_PER_MIN: '2',
  RATE_LIMIT_SEARCHES_PER_MIN: '3',
  RATE_LIMIT_MCP_ASKS_PER_MIN: '2',
  SSE_MAX_STREAMS_PER_READER: '2',
};

/** The MCP SDK's own client on the API's /mcp, as test/e2e/mcp.e2e-spec.ts connects. */
async function mcpClient(base: string, token: string): Promise<McpClient> {
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  const client = new McpClient({ name: 'parley-e2e', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

const structured = (r: unknown) => (r as CallToolResult).structuredContent as Record<string, any>;
const text = (r: unknown) => ((r as CallToolResult).content[0] as { text: string }).text;

/** A 429 as every limit answers it: the problem rate_limited and a Retry-After in seconds. */
function expectRateLimited(r: { status: number; body: any; headers: Headers }): void {
  expect([r.status, r.body?.code]).toEqual([429, 'rate_limited']);
  expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
  expect(r.body.retryAfter).toBe(Number(r.headers.get('retry-after')));
}

describe('per-reader rate limits (e2e)', () => {
  const s = useReaderStack({ env: LIMITS });
  const mcps: McpClient[] = [];
  const redis = new Redis(redisUrl());
  afterAll(async () => {
    await Promise.all(mcps.map((c) => c.close()));
    redis.disconnect();
  });
  const mcpFor = async (c: Client) => {
    const mcp = await mcpClient(s.stack.base, c.token);
    mcps.push(mcp);
    return mcp;
  };
  const reader = (name: string) => clientFor(s.stack.base, `${name}-${randomUUID()}`);
  const newConversation = async (c: Client) => expectOk(await c.api.POST('/v1/conversations', { body: {} }), 201).id;
  /** the reader's conversations as the log has them (the list is a projection, which may lag) */
  const conversationCount = async (c: Client): Promise<number> =>
    Number(
      (
        await s.stack.db.pool.query(
          `SELECT count(*) FROM events WHERE type = 'ConversationStarted' AND version = 1 AND data->>'ownerId' = $1`,
          [c.userId],
        )
      ).rows[0].count,
    );
  const conversationEvents = async (): Promise<number> =>
    Number(
      (await s.stack.db.pool.query(`SELECT count(*) FROM events WHERE stream_id LIKE 'conversation-%'`)).rows[0].count,
    );

  it('admits 100 concurrent forks only up to the fork points, a long history costing more; the refused copy nothing', async () => {
    const frank = reader('frank');
    const source = await newConversation(frank);
    // 150 renames: a history of 151 events, which a fork counts as 2 points (1 + 1 per 100 events)
    for (let i = 0; i < 150; i++)
      expect((await frank.req('PATCH', `/v1/conversations/${source}`, { title: `t${i}` })).status).toBe(200);
    const before = await conversationEvents();

    const forks = await Promise.all(
      Array.from({ length: 100 }, () => frank.req('POST', `/v1/conversations/${source}/fork`, { version: 151 })),
    );

    const admitted = forks.filter((r) => r.status === 201);
    const refused = forks.filter((r) => r.status !== 201);
    expect(admitted).toHaveLength(5); // 10 points a minute, 2 a fork
    expect(refused).toHaveLength(95);
    for (const r of refused) expectRateLimited(r);
    expect(refused[0].body.detail).toMatch(/forks/);
    const forkStreams = admitted.map((r) => conversationStreamId(r.body.id));
    const { rows } = await s.stack.db.pool.query<{ stream_id: string; events: string }>(
      `SELECT stream_id, count(*) AS events FROM events WHERE stream_id = ANY($1) GROUP BY stream_id`,
      [forkStreams],
    );
    expect(rows.map((r) => Number(r.events))).toEqual(Array(5).fill(151));
    expect((await conversationEvents()) - before).toBe(5 * 151); // the log gained the admitted forks alone
    expect(await conversationCount(frank)).toBe(6);
    // another reader forks their own as usual
    const grace = reader('grace');
    const hers = await newConversation(grace);
    expect((await grace.req('POST', `/v1/conversations/${hers}/fork`, { version: 1 })).status).toBe(201);
  });

  it('refuses a new conversation past RATE_LIMIT_CONVERSATIONS_PER_MIN, starting none', async () => {
    const bob = reader('bob');
    for (let i = 0; i < 3; i++) await newConversation(bob);
    expectRateLimited(await bob.req('POST', '/v1/conversations', {}));
    expect(await conversationCount(bob)).toBe(3);
  });

  it('refuses a batch past RATE_LIMIT_BATCHES_PER_MIN, however few its prompts', async () => {
    const dave = reader('dave');
    const id = await newConversation(dave);
    const batch = (prompt: string) =>
      dave.req('POST', `/v1/conversations/${id}/batches`, { prompts: [prompt], mode: 'independent' });
    expect((await batch('one')).status).toBe(202);
    expect((await batch('two')).status).toBe(202);
    expectRateLimited(await batch('three'));
    const { items } = expectOk(
      await dave.api.GET('/v1/conversations/{id}/events', { params: { path: { id }, query: { limit: 1000 } } }),
    );
    expect(items.filter(isEvent('BatchStarted'))).toHaveLength(2);
  });

  it('counts searches over HTTP and MCP search_book together; past the limit HTTP answers 429, MCP a tool error', async () => {
    const alice = s.alice;
    const mcp = await mcpFor(alice);
    const search = () => alice.req('GET', `/v1/books/${s.bookId}/search?q=telescope`);
    const searchBook = () => mcp.callTool({ name: 'search_book', arguments: { bookId: s.bookId, query: 'telescope' } });
    expect((await search()).status).toBe(200);
    expect((await searchBook()).isError).toBeFalsy();
    expect((await search()).status).toBe(200);

    expectRateLimited(await search());
    const refused = await searchBook();
    expect(refused.isError).toBe(true);
    expect(structured(refused)).toMatchObject({ code: 'rate_limited', retryAfter: expect.any(Number) });
    expect(text(refused)).toMatch(/^rate_limited: too many searches: at most 3 a minute; try again in \d+ s$/);
  });

  it('refuses an MCP ask past RATE_LIMIT_MCP_ASKS_PER_MIN, posting nothing', async () => {
    const alice = s.alice;
    const mcp = await mcpFor(alice);
    const id = await newConversation(alice);
    const ask = (question: string) => mcp.callTool({ name: 'ask', arguments: { question, conversationId: id } });
    for (const q of ['first?', 'second?']) expect(structured(await ask(q)).status).toBe('answered');

    const refused = await ask('third?');
    expect(refused.isError).toBe(true);
    expect(structured(refused)).toMatchObject({ code: 'rate_limited', retryAfter: expect.any(Number) });
    expect(text(refused)).toMatch(/MCP asks/);
    const { items } = expectOk(
      await alice.api.GET('/v1/conversations/{id}/events', { params: { path: { id }, query: { limit: 1000 } } }),
    );
    expect(items.filter(isEvent('UserMessagePosted')).map((e) => e.data.content)).toEqual(['first?', 'second?']);
  });

  it('counts an MCP ask that starts a conversation against RATE_LIMIT_CONVERSATIONS_PER_MIN', async () => {
    const carol = reader('carol');
    for (let i = 0; i < 3; i++) await newConversation(carol);
    const refused = await (await mcpFor(carol)).callTool({ name: 'ask', arguments: { question: 'anyone?' } });
    expect(structured(refused)).toMatchObject({ code: 'rate_limited' });
    expect(text(refused)).toMatch(/new conversations/);
    expect(await conversationCount(carol)).toBe(3);
  });

  /** Opens the reader's streams with fetch, so a test sees the status of each and closes it by aborting. */
  const streamsOf = (c: Client) => {
    const open: AbortController[] = [];
    return {
      open: async (path: string) => {
        const abort = new AbortController();
        const r = await fetch(s.stack.base + path, { headers: c.auth, signal: abort.signal });
        if (r.status === 200) open.push(abort);
        return r;
      },
      closeOne: () => open.shift()!.abort(),
      closeAll: () => open.splice(0).forEach((a) => a.abort()),
    };
  };

  it('holds a reader to SSE_MAX_STREAMS_PER_READER streams open at once, MCP asks included; closing one frees its slot', async () => {
    const ivy = reader('ivy');
    const id = await newConversation(ivy);
    const streams = streamsOf(ivy);
    const stream = () => streams.open(`/v1/conversations/${id}/stream`);
    try {
      expect((await stream()).status).toBe(200);
      expect((await stream()).status).toBe(200);

      const refused = await stream();
      expectRateLimited({ status: refused.status, body: await refused.json(), headers: refused.headers });
      // an MCP ask follows its turn on a stream of its own: refused too, posting nothing
      const ask = await (
        await mcpFor(ivy)
      ).callTool({ name: 'ask', arguments: { question: 'q?', conversationId: id } });
      expect(structured(ask)).toMatchObject({ code: 'rate_limited', retryAfter: expect.any(Number) });
      expect(text(ask)).toMatch(/open streams/);
      const { items } = expectOk(await ivy.api.GET('/v1/conversations/{id}/events', { params: { path: { id } } }));
      expect(items.filter(isEvent('UserMessagePosted'))).toEqual([]);
      // another reader's streams are their own
      const erin = reader('erin');
      const hers = streamsOf(erin);
      expect((await hers.open(`/v1/conversations/${await newConversation(erin)}/stream`)).status).toBe(200);
      hers.closeAll();

      streams.closeOne();
      await waitFor('a slot to free once a stream closed', async () => (await stream()).status === 200);
      expect((await stream()).status).toBe(429);
    } finally {
      streams.closeAll();
    }
  });

  it("counts a book's ingestion stream among the reader's streams", async () => {
    const streams = streamsOf(s.alice);
    const id = await newConversation(s.alice);
    try {
      for (let i = 0; i < 2; i++) expect((await streams.open(`/v1/conversations/${id}/stream`)).status).toBe(200);
      expect((await streams.open(`/v1/books/${s.bookId}/events`)).status).toBe(429);
      streams.closeOne();
      await waitFor(
        'a slot for the book stream',
        async () => (await streams.open(`/v1/books/${s.bookId}/events`)).status === 200,
      );
    } finally {
      streams.closeAll();
    }
  });

  it('leaves no limiter key behind an erased account', async () => {
    const hank = reader('hank');
    const id = await newConversation(hank);
    expect((await hank.req('POST', `/v1/conversations/${id}/fork`, { version: 1 })).status).toBe(201);
    expect((await hank.req('POST', `/v1/conversations/${id}/messages`, { content: 'hello' })).status).toBe(202);
    const keys = () => redis.keys(`${s.stack.env.QUEUE_PREFIX}:rl:*${hank.userId}*`);
    expect((await keys()).length).toBeGreaterThanOrEqual(3); // conversations, forks, posts
    expect((await hank.req('DELETE', '/v1/me')).status).toBe(204);
    expect(await keys()).toEqual([]);
  });
});
