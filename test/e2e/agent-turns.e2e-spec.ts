import { conversationStreamId, TURN_ENDING_TYPES } from '@parley/conversation';
import { Envelope, expectEvent, expectOk, isEvent, turnOf } from '../support/api';
import { apiError, FakeReply, RecordedRequest } from '../support/fake-anthropic/fake-anthropic.server';
import { questionOf } from '../support/fake-anthropic/questions';
import { newBook } from '../support/factories/books';
import { openStream } from '../support/sse-client';
import { useReaderStack } from '../support/use-stack';
import { waitFor } from '../support/wait-for';
import { redisUrl } from '../support/test-database';
import Redis from 'ioredis';
import { Queue } from 'bullmq';
import { AGENT_TURNS_QUEUE, QUEUED_TURN_RECHECK_MS, runTurnJobId } from '@parley/agent';

/** The fake model: searches the book once, then answers citing [1]; directives in the question vary it. */
function model(req: RecordedRequest): FakeReply {
  const msgs = req.body.messages;
  const last = msgs[msgs.length - 1];
  const hasResults = Array.isArray(last.content) && last.content.some((b: any) => b.type === 'tool_result');
  const q = questionOf(req);
  const toolsAllowed = req.body.tools?.length && req.body.tool_choice?.type !== 'none';
  if (q.includes('LOOP') && toolsAllowed)
    return { content: [{ type: 'tool_use', name: 'search_book', input: { query: 'lamp' } }] };
  if (q.includes('SLOW')) {
    return { content: [{ type: 'text', text: 'word '.repeat(200) }], delayMsPerChunk: 50 };
  }
  if (q.includes('READ') && (toolsAllowed || hasResults)) return reader(last, hasResults);
  if (!hasResults && toolsAllowed) {
    if (q.includes('PARALLEL')) {
      return {
        content: [
          { type: 'text', text: 'Two searches.' },
          { type: 'tool_use', name: 'search_book', input: { query: 'telescope' } },
          { type: 'tool_use', name: 'search_book', input: { query: 'logbook' } },
        ],
      };
    }
    if (q.includes('BROKEN')) return { content: [{ type: 'tool_use', name: 'search_book', input: { wrong: true } }] };
    return { content: [{ type: 'tool_use', name: 'search_book', input: { query: q.replace(/\W+/g, ' ').trim() } }] };
  }
  return { content: [{ type: 'text', text: `Here is what the book says about "${q.slice(0, 40)}". [1]` }] };
}

/** READ: the model reads as a person does: the table of contents, then chapter 2's opening, then answers citing it. */
function reader(last: { content: any[] }, hasResults: boolean): FakeReply {
  const results = hasResults ? last.content.filter((b) => b.type === 'tool_result') : [];
  const text = results.map((r) => (typeof r.content === 'string' ? r.content : JSON.stringify(r.content))).join(' ');
  if (!hasResults) return { content: [{ type: 'tool_use', name: 'list_chapters', input: {} }] };
  if (text.includes('- chapter ')) {
    return { content: [{ type: 'tool_use', name: 'read_passage', input: { chapter: 2, count: 2 } }] };
  }
  const n = /\[(\d+)\]/.exec(text)?.[1];
  return {
    content: [{ type: 'text', text: n ? `In the lamp room she found a logbook [${n}].` : `I cannot read on: ${text}` }],
  };
}

describe('agent turns (e2e, real SDK against the fake Anthropic API)', () => {
  const s = useReaderStack({
    fake: { defaultResponder: model },
    env: { LLM_MODEL: 'claude-sonnet-5-5', AGENT_MAX_ITERATIONS: '3', LLM_MAX_RETRIES: '2' },
  });
  const { conversation } = s;
  const events = async (id: string) =>
    expectOk(await s.alice.api.GET('/v1/conversations/{id}/events', { params: { path: { id } } })).items;
  const post = async (id: string, content: string) =>
    expectOk(
      await s.alice.api.POST('/v1/conversations/{id}/messages', { params: { path: { id } }, body: { content } }),
      202,
    );
  const ended = (turnId: string) => (e: Envelope) => TURN_ENDING_TYPES.includes(e.type) && turnOf(e) === turnId;
  const untilEnded = async (id: string, turnId: string, ms = 20_000) =>
    waitFor(`turn ${turnId} to end`, async () => (await events(id)).find(ended(turnId)), ms);

  it('runs a tool turn: ToolInvoked, ToolResultRecorded, AssistantReplied with citations, usage and cost', async () => {
    const id = await conversation();
    const { turnId } = await post(id, 'What did Marisol carry to the island?');
    const reply = expectEvent(await untilEnded(id, turnId), 'AssistantReplied');
    const types = (await events(id)).map((e) => e.type);
    expect(types).toEqual([
      'ConversationStarted',
      'UserMessagePosted',
      'ToolInvoked',
      'ToolResultRecorded',
      'AssistantReplied',
    ]);
    const evs = await events(id);
    const invoked = expectEvent(evs[2], 'ToolInvoked');
    const result = expectEvent(evs[3], 'ToolResultRecorded');
    expect(invoked.data).toMatchObject({
      turnId,
      name: 'search_book',
      iteration: 1,
      toolUseId: expect.stringMatching(/^toolu_/),
    });
    expect(result.data).toMatchObject({ turnId, toolUseId: invoked.data.toolUseId, isError: false });
    expect(result.data.content).toMatch(/\[1\].*Chapter 1/s);
    expect(reply.data).toMatchObject({
      turnId,
      model: 'claude-sonnet-5-5',
      stopReason: 'end_turn',
      iterations: 2,
      isFromBook: true,
      usage: {
        inputTokens: expect.any(Number),
        outputTokens: expect.any(Number),
        cacheReadInputTokens: expect.any(Number),
        cacheCreationInputTokens: expect.any(Number),
      },
    });
    expect(reply.data.citations[0]).toMatchObject({
      chunkId: result.data.chunks![0].chunkId,
      chapter: expect.stringContaining('Arrival'),
    });
    expect(reply.data.costUsd).toBeGreaterThan(0);
    expect(s.fake.rejected).toEqual([]);
  });

  it("asks the model to search like a reader: the book's words, parallel searches, search again", async () => {
    const id = await conversation();
    const { turnId } = await post(id, 'GUIDANCE: what did she find in the lamp room?');
    await untilEnded(id, turnId);
    const req = s.fake.requests.find((r) => questionOf(r).startsWith('GUIDANCE:') && r.body.tools?.length)!;
    const system = (req.body.system as Array<{ type: string; text: string }>).map((b) => b.text).join('\n');
    const tool = (req.body.tools as Array<{ name: string; description: string }>).find(
      (t) => t.name === 'search_book',
    )!;
    for (const text of [system, tool.description].map((t) => t.replace(/\s+/g, ' '))) {
      expect(text).toMatch(/book's likely words/);
      expect(text).toMatch(/names, places (and|or) objects/);
      expect(text).toMatch(/not (in )?the reader's phrasing/);
      expect(text).toMatch(/several searches in parallel/);
      expect(text).toMatch(/search again with other words/);
    }
    // nothing of the turn in the system prompt: it stays byte-stable for the prompt cache
    expect(system).not.toContain('GUIDANCE');
    expect(system).not.toContain(turnId);
    expect(s.fake.rejected).toEqual([]);
  });

  it('runs parallel tool calls and returns their results together, results first', async () => {
    const id = await conversation();
    const { turnId } = await post(id, 'PARALLEL: the telescope and the logbook?');
    await untilEnded(id, turnId);
    const evs = await events(id);
    expect(evs.filter((e) => e.type === 'ToolInvoked')).toHaveLength(2);
    expect(evs.filter((e) => e.type === 'ToolResultRecorded')).toHaveLength(2);
    const second = s.fake.requests.filter((r) => questionOf(r).startsWith('PARALLEL')).pop()!;
    const lastUser = second.body.messages[second.body.messages.length - 1];
    expect(lastUser.content.map((b: any) => b.type)).toEqual(['tool_result', 'tool_result']);
    expect(evs.at(-1)?.type).toBe('AssistantReplied');
    // the two passages are numbered apart, so [n] names one passage within the turn
    const starts = evs.filter(isEvent('ToolResultRecorded')).map((e) => e.data.citationStart);
    expect(new Set(starts).size).toBe(2);
  });

  it('reads like a person: the table of contents, then a chapter in place, cited like a search, within the reading position', async () => {
    const id = await conversation();
    const { turnId } = await post(id, 'READ: what is in the lamp room?');
    const reply = expectEvent(await untilEnded(id, turnId), 'AssistantReplied');
    const evs = await events(id);
    expect(evs.filter(isEvent('ToolInvoked')).map((e) => e.data.name)).toEqual(['list_chapters', 'read_passage']);
    const [contents, read] = evs.filter(isEvent('ToolResultRecorded'));
    expect(contents.data.content).toMatch(
      /- chapter 1: Chapter 1: Arrival \(\d+ passages?\)\n- chapter 2: Chapter 2: The Lamp/,
    );
    expect(read.data.isError).toBe(false);
    expect(read.data.content).toContain('logbook bound in green leather');
    expect(reply.data.citations).toEqual([
      expect.objectContaining({ chunkId: read.data.chunks![0].chunkId, chapter: 'Chapter 2: The Lamp' }),
    ]);
    expect(reply.data.isFromBook).toBe(true);

    // the reader who has read chapter 1 only: the contents stop there, and chapter 2 is not read
    expectOk(
      await s.alice.api.PATCH('/v1/conversations/{id}', { params: { path: { id } }, body: { readingPosition: 1 } }),
    );
    const second = await post(id, 'READ: and now?');
    await untilEnded(id, second.turnId);
    const later = (await events(id))
      .filter(isEvent('ToolResultRecorded'))
      .filter((e) => e.data.turnId === second.turnId);
    expect(later[0].data.content).not.toContain('The Lamp');
    expect(later[1].data).toMatchObject({
      isError: true,
      content: expect.stringContaining('has not reached chapter 2'),
    });
    expect(JSON.stringify(later)).not.toContain('green leather');
    expect(s.fake.rejected).toEqual([]);
  });

  it('returns a failing tool call as is_error and the model carries on', async () => {
    const id = await conversation();
    const { turnId } = await post(id, 'BROKEN tool input please');
    const reply = await untilEnded(id, turnId);
    const result = (await events(id)).find(isEvent('ToolResultRecorded'));
    expect(result?.data.isError).toBe(true);
    expect(reply.type).toBe('AssistantReplied');
    const req = s.fake.requests.filter((r) => questionOf(r).startsWith('BROKEN')).pop()!;
    expect(req.body.messages.at(-1).content[0]).toMatchObject({ type: 'tool_result', is_error: true });
  });

  it('streams token deltas as AssistantTextDelta frames without id', async () => {
    const id = await conversation();
    // streamed slower than the worker batches deltas (40 ms), so the reply arrives in several
    s.fake.enqueue({
      content: [{ type: 'text', text: 'The storm broke over the lamp room at dusk. '.repeat(4) }],
      delayMsPerChunk: 60,
    });
    const stream = openStream(`${s.stack.base}/v1/conversations/${id}/stream`, { token: s.alice.token });
    const { turnId } = await post(id, 'Tell me about the storm');
    await stream.until('AssistantReplied', (f) => f.some((x) => x.event === 'AssistantReplied'), 20_000);
    stream.close();
    const deltas = stream.frames.filter((f) => f.event === 'AssistantTextDelta');
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.every((d) => d.id === undefined && d.data.turnId === turnId)).toBe(true);
    const replied = stream.frames.find((f) => f.event === 'AssistantReplied')!;
    // joined, they are the answer as written so far; its last batch comes in AssistantReplied alone
    const joined = deltas.map((d) => d.data.text).join('');
    expect(joined.length).toBeGreaterThan(0);
    expect(joined.length).toBeLessThan(replied.data.data.content.length);
    expect(replied.data.data.content.startsWith(joined)).toBe(true);
  });

  it('retries 529s and succeeds; when retries run out, TurnFailed (retryable) and the next turn still runs', async () => {
    const id = await conversation();
    s.fake.enqueue(apiError(529), apiError(529));
    const first = await post(id, 'After the overload, who arrived?');
    const ok = await untilEnded(id, first.turnId, 30_000);
    expect(ok.type).toBe('AssistantReplied');

    s.fake.enqueue(apiError(529), apiError(529), apiError(529));
    const second = await post(id, 'This one meets a persistent overload');
    const failed = await untilEnded(id, second.turnId, 30_000);
    expect(failed).toMatchObject({ type: 'TurnFailed', data: { code: 'llm_overloaded', retryable: true } });
    const third = await post(id, 'And after that?');
    expect((await untilEnded(id, third.turnId, 30_000)).type).toBe('AssistantReplied');
  }, 60_000);

  it('cuts the loop after AGENT_MAX_ITERATIONS calls with a final answer without tools', async () => {
    const id = await conversation();
    const { turnId } = await post(id, 'LOOP forever');
    const reply = expectEvent(await untilEnded(id, turnId), 'AssistantReplied');
    expect(reply.data.iterations).toBe(3);
    const loopRequests = s.fake.requests.filter((r) => questionOf(r).startsWith('LOOP'));
    expect(loopRequests).toHaveLength(3);
    expect(loopRequests[2].body.tool_choice).toEqual({ type: 'none' });
  });

  it('cancels a turn mid-stream, aborting the LLM request before its end', async () => {
    const id = await conversation();
    const abortedBefore = s.fake.aborted;
    const { turnId } = await post(id, 'SLOW answer please');
    await waitFor('the slow stream to start', () => s.fake.requests.some((r) => questionOf(r).startsWith('SLOW')));
    await new Promise((r) => setTimeout(r, 300));
    const cancel = () =>
      s.alice.api.POST('/v1/conversations/{id}/turns/{turnId}/cancel', { params: { path: { id, turnId } } });
    expectOk(await cancel(), 202);
    // an abort is a hang-up before the stream's end, 10 s after its start (200 deltas, 50 ms apart)
    await waitFor('the fake to see the abort', () => s.fake.aborted > abortedBefore, 5_000);
    await new Promise((r) => setTimeout(r, 500));
    const endings = (await events(id)).filter(ended(turnId));
    expect(endings.map((e) => e.type)).toEqual(['TurnCancelled']);
    const again = await cancel();
    expect(again.data).toMatchObject({ cancelled: false });
    expect((await events(id)).filter(ended(turnId))).toHaveLength(1);
  });

  it('records the attempt a stream broke off midway with what the call that followed answered', async () => {
    const id = await conversation();
    s.fake.enqueue({
      content: [{ type: 'text', text: 'word '.repeat(50) }],
      usage: { input_tokens: 3000 },
      breakOff: { afterDeltas: 2, type: 'overloaded_error' },
    });
    const { turnId } = await post(id, 'What did the keeper write?');
    expectEvent(await untilEnded(id, turnId), 'AssistantReplied');
    const log = (await events(id)).filter((e) => turnOf(e) === turnId);
    expect(log.map((e) => e.type)).toEqual([
      'UserMessagePosted',
      'ModelCallStopped',
      'ToolInvoked',
      'ToolResultRecorded',
      'AssistantReplied',
    ]);
    expect(log[1].data).toMatchObject({ iteration: 1, reason: 'broken', usage: { inputTokens: 3000 } });
  });

  it('stops a running turn when its conversation or its book is deleted: the LLM stream aborts, nothing of the turn is left', async () => {
    const deletions: Array<(conversationId: string, book: string) => Promise<{ response: Response }>> = [
      (conversationId) => s.alice.api.DELETE('/v1/conversations/{id}', { params: { path: { id: conversationId } } }),
      (_, book) => s.alice.api.DELETE('/v1/books/{id}', { params: { path: { id: book } } }),
    ];
    for (const deletion of deletions) {
      const book = (await newBook(s.alice)).id;
      const id = expectOk(await s.alice.api.POST('/v1/conversations', { body: { bookId: book } }), 201).id;
      const asked = `SLOW answer for ${id}`;
      await post(id, asked);
      const request = await waitFor('the slow stream to start', () =>
        s.fake.requests.find((r) => questionOf(r) === asked),
      );
      await new Promise((r) => setTimeout(r, 300));
      expect((await deletion(id, book)).response.status).toBe(204);
      // `aborted`: the worker hung up before the stream's end, which comes 10 s after its start
      // (200 deltas, 50 ms apart); how soon is a matter for a benchmark, not a loaded CI machine
      await waitFor('the fake to see the abort', () => request.aborted, 5_000);
      await new Promise((r) => setTimeout(r, 500));
      const { rows } = await s.stack.db.pool.query<{ type: string }>(
        'SELECT type FROM events WHERE stream_id = $1 ORDER BY version',
        [conversationStreamId(id)],
      );
      expect(rows.map((r) => r.type)).toEqual(['ConversationErased']);
      // no answer was bought for it after the abort, and what the aborted call was billed is in the ledger
      expect(s.fake.requests.filter((r) => questionOf(r) === asked)).toHaveLength(1);
      const billed = await waitFor('the stopped call in the usage ledger', async () => {
        const lines = await s.stack.db.pool.query<{ kind: string; input_tokens: string; owner_id: string }>(
          `SELECT kind, input_tokens, owner_id FROM usage_records WHERE conversation_id = $1 AND kind = 'stopped_call'`,
          [id],
        );
        return lines.rows[0];
      });
      expect(Number(billed.input_tokens)).toBeGreaterThan(0);
      expect(billed.owner_id).toBe(s.alice.userId);
      // and its job, which was running, leaves Redis once it has ended (the worker's erasure sweep)
      const redis = new Redis(redisUrl());
      try {
        const keys = `${s.stack.env.QUEUE_PREFIX}:agent-turns:*${id}*`;
        await waitFor(
          'the running job to be removed from Redis',
          async () => (await redis.keys(keys)).length === 0,
          15_000,
        );
      } finally {
        redis.disconnect();
      }
    }
  });

  it('answers five rapid posts in posting order, one at a time', async () => {
    const id = await conversation();
    const turns: string[] = [];
    for (let i = 0; i < 5; i++) turns.push((await post(id, `Question number ${i}`)).turnId);
    await untilEnded(id, turns[4], 40_000);
    const evs = await events(id);
    const replies = evs.filter(isEvent('AssistantReplied')).map((e) => e.data.turnId);
    expect(replies).toEqual(turns);
    // one at a time: nothing of turn k+1 is recorded before turn k ends
    const order = evs.filter((e) => turnOf(e) && e.type !== 'UserMessagePosted').map((e) => turns.indexOf(turnOf(e)!));
    expect(order).toEqual([...order].sort((a, b) => a - b));
    // each queued turn is woken by the end of the one before it, not by its recheck timer (2 s and up)
    const at = (e: Envelope) => Date.parse(e.occurredAt);
    for (let k = 1; k < turns.length; k++) {
      const endOfPrevious = at(evs.find(ended(turns[k - 1]))!);
      const firstStep = at(evs.find((e) => turnOf(e) === turns[k] && e.type !== 'UserMessagePosted')!);
      expect(firstStep - endOfPrevious).toBeLessThan(QUEUED_TURN_RECHECK_MS / 2);
    }
    // each job was taken once: a turn posted behind another is queued delayed by the API, not
    // taken by a worker only to be put back
    const queue = new Queue(AGENT_TURNS_QUEUE, { connection: { url: redisUrl() }, prefix: s.stack.env.QUEUE_PREFIX });
    try {
      const jobs = await Promise.all(turns.map((t) => queue.getJob(runTurnJobId(id, t))));
      expect(jobs.map((j) => j?.attemptsStarted)).toEqual(turns.map(() => 1));
    } finally {
      await queue.close();
    }
  }, 60_000);

  it("sends turn 2 a request whose prefix is byte-identical to turn 1's, and it reads the cache", async () => {
    const id = await conversation();
    const t1 = await post(id, 'First: who is Marisol?');
    await untilEnded(id, t1.turnId);
    const t2 = await post(id, 'Second: and the ship?');
    const reply2 = expectEvent(await untilEnded(id, t2.turnId), 'AssistantReplied');
    const reqs = s.fake.requests.filter((r) => JSON.stringify(r.body.messages[0]).includes('First: who is Marisol?'));
    const turn1Last = reqs.filter((r) => !JSON.stringify(r.body.messages).includes('Second:')).pop()!;
    const turn2First = reqs.find((r) => JSON.stringify(r.body.messages).includes('Second:'))!;
    const strip = (x: unknown) => JSON.stringify(x, (k, v) => (k === 'cache_control' ? undefined : v));
    const n = turn1Last.body.messages.length;
    expect(strip(turn2First.body.messages.slice(0, n))).toBe(strip(turn1Last.body.messages));
    expect(strip(turn2First.body.tools)).toBe(strip(turn1Last.body.tools));
    expect(strip(turn2First.body.system)).toBe(strip(turn1Last.body.system));
    const breakpoints = (r: RecordedRequest) => (r.rawBody.match(/"cache_control"/g) ?? []).length;
    expect(breakpoints(turn2First)).toBeLessThanOrEqual(4);
    expect(reply2.data.usage.cacheReadInputTokens).toBeGreaterThan(0);
  });
});
