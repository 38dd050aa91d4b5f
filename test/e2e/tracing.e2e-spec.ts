import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import { AGENT_TURNS_QUEUE } from '@parley/agent';
import { TURN_ENDING_TYPES } from '@parley/conversation';
import { Envelope, turnOf } from '../support/api';
import { FakeReply, RecordedRequest } from '../support/fake-anthropic/fake-anthropic.server';
import { OtlpReceiver, ReceivedSpan, startOtlpReceiver } from '../support/otlp-receiver';
import { openStream } from '../support/sse-client';
import { ReaderStack, useReaderStack } from '../support/use-stack';
import { waitFor } from '../support/wait-for';

/** The stack's env for tracing to `receiver` over `protocol`, exporting every 100 ms. */
const tracingEnv = (receiver: OtlpReceiver, protocol: string) => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
  OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
  OTEL_BSP_SCHEDULE_DELAY: '100',
  LOG_LEVEL: 'info',
});

/** A client's own trace and span, as it would send them in `traceparent`. */
function clientSpan() {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

const SERVER = 2;
const CLIENT = 3;
const PRODUCER = 4;
const CONSUMER = 5;

const service = (s: ReceivedSpan) => s.resource['service.name'];
const named = (spans: ReceivedSpan[], name: string) => spans.filter((s) => s.name === name);
const chatSpans = (spans: ReceivedSpan[]) =>
  spans.filter((s) => s.name.startsWith('chat ') && s.attributes['gen_ai.usage.output_tokens'] !== undefined);

/** Posts with the client's traceparent; the turn id. */
async function postTraced(s: ReaderStack, id: string, content: string, traceparent: string): Promise<string> {
  const r = await s.alice.req('POST', `/v1/conversations/${id}/messages`, { content }, { traceparent });
  expect(r.status).toBe(202);
  return r.body.turnId as string;
}

describe.each(['http/json', 'http/protobuf'])('tracing (e2e) over OTLP %s', (protocol) => {
  let receiver: OtlpReceiver;
  beforeAll(async () => {
    receiver = await startOtlpReceiver();
  });
  const s = useReaderStack({ env: () => tracingEnv(receiver, protocol), timeoutMs: 90_000 });
  afterAll(() => receiver?.close());
  const { conversation, events } = s;

  it('keeps ?access_token= out of every span attribute: the stream, a refused request, the Nest and Fastify spans', async () => {
    const client = clientSpan();
    const id = await conversation();
    const token = s.alice.token;
    const headers = { traceparent: client.traceparent };
    // the event stream with its token in the query, as EventSource sends it; closed once it answers
    const streaming = new AbortController();
    const stream = await fetch(`${s.stack.base}/v1/conversations/${id}/stream?access_token=${token}&after=0`, {
      headers,
      signal: streaming.signal,
    });
    expect(stream.status).toBe(200);
    streaming.abort();
    // spelled otherwise, and on a route that takes no query token (401)
    const refused = await fetch(`${s.stack.base}/v1/books?access%5Ftoken=${token}`, { headers });
    expect(refused.status).toBe(401);

    const spans = await receiver.trace(
      client.traceId,
      (found) =>
        found.filter((x) => x.kind === SERVER).length >= 2 &&
        found.some((x) => x.attributes['nestjs.type'] === 'request_context') &&
        found.some((x) => x.attributes['fastify.root'] !== undefined || x.attributes['url.path'] !== undefined),
    );
    // the URL attributes are there, with the token's value replaced
    const urls = spans.flatMap((x) =>
      Object.entries(x.attributes).filter(([, v]) => typeof v === 'string' && /access(_|%5F)token/i.test(v)),
    );
    expect(urls.length).toBeGreaterThanOrEqual(3);
    expect(urls.map(([key]) => key)).toEqual(expect.arrayContaining(['url.full', 'url.query']));
    for (const [key, value] of urls) expect([key, value]).toEqual([key, expect.not.stringContaining(token)]);
    // and nowhere else in anything exported, this trace or another
    expect(JSON.stringify(receiver.spans)).not.toContain(token);
    expect(JSON.stringify(receiver.spans)).not.toContain(token.split('.')[2]); // not even its signature
  }, 60_000);

  it('puts a turn in the client’s trace: the POST, the enqueue, the worker’s run, its model calls and tool calls', async () => {
    const client = clientSpan();
    const id = await conversation();
    const sse = openStream(`${s.stack.base}/v1/conversations/${id}/stream`, { token: s.alice.token });
    await sse.until('the stream open', () => sse.opens > 0);
    const turnId = await postTraced(s, id, 'Where is the lamp kept?', client.traceparent);
    let log: Envelope[] = [];
    await waitForEnding(async () => (log = await events(id)), turnId);

    const spans = await receiver.trace(
      client.traceId,
      // each span is exported when it ends: the run's (the job's) after the turn's last append
      (found) =>
        chatSpans(found).length >= 2 &&
        ['execute_tool search_book', 'send agent-turns', 'process agent-turns'].every((n) => named(found, n).length) &&
        found.some((x) => x.parentSpanId === client.spanId),
    );
    expect(Object.keys(receiver.requests)).toEqual([
      protocol === 'http/json' ? 'application/json' : 'application/x-protobuf',
    ]);
    expect(new Set(spans.map(service))).toEqual(new Set(['parley-api', 'parley-worker']));

    // the POST's server span is the child of the client's span
    const post = spans.find((x) => x.kind === SERVER && x.parentSpanId === client.spanId)!;
    expect(post).toMatchObject({
      name: 'POST /v1/conversations/:id/messages',
      resource: { 'service.name': 'parley-api' },
    });

    // the enqueue (API) and the job's run (worker) are in the trace, the run under the enqueue
    const send = named(spans, 'send agent-turns').find((x) => service(x) === 'parley-api')!;
    expect(send.kind).toBe(PRODUCER);
    const run = named(spans, 'process agent-turns')[0];
    expect(run).toMatchObject({
      kind: CONSUMER,
      parentSpanId: send.spanId,
      resource: { 'service.name': 'parley-worker' },
    });
    expect(run.attributes['parley.turn.id']).toBe(turnId);

    // each model call: a GenAI client span with the model and the tokens, and no content by default
    const [toolCall, answer] = chatSpans(spans);
    for (const chat of [toolCall, answer]) {
      expect(chat.kind).toBe(CLIENT);
      expect(chat.name).toBe(`chat ${chat.attributes['gen_ai.request.model']}`);
      expect(chat.attributes).toMatchObject({
        'gen_ai.operation.name': 'chat',
        'gen_ai.system': 'anthropic',
        'gen_ai.provider.name': 'anthropic',
        'gen_ai.response.model': expect.any(String),
        'gen_ai.usage.input_tokens': expect.any(Number),
        'gen_ai.usage.cache_read_input_tokens': expect.any(Number),
        'gen_ai.usage.cache_creation_input_tokens': expect.any(Number),
      });
      expect(chat.attributes['gen_ai.usage.output_tokens']).toBeGreaterThan(0);
      expect(chat.attributes['gen_ai.input.messages']).toBeUndefined();
      expect(chat.attributes['gen_ai.output.messages']).toBeUndefined();
    }
    expect([toolCall, answer].map((c) => c.attributes['gen_ai.response.finish_reasons'])).toEqual(
      expect.arrayContaining([['tool_use'], ['end_turn']]),
    );

    // the tool call, by the id the model gave it
    const invoked = log.find((e) => e.type === 'ToolInvoked' && turnOf(e) === turnId) as Extract<
      Envelope,
      { type: 'ToolInvoked' }
    >;
    const tool = named(spans, 'execute_tool search_book')[0];
    expect(tool.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'search_book',
      'gen_ai.tool.call.id': invoked.data.toolUseId,
    });
    expect(named(spans, 'append conversation').map(service)).toEqual(
      expect.arrayContaining(['parley-api', 'parley-worker']),
    );

    // the log keeps the trace: the post's events name a span of it, and so do the worker's
    const posted = log.find((e) => e.type === 'UserMessagePosted' && turnOf(e) === turnId)!;
    const stamped = String(traceparentOf(posted) ?? '');
    expect(stamped).toMatch(new RegExp(`^00-${client.traceId}-[0-9a-f]{16}-01$`));
    expect(spans.map((x) => x.spanId)).toContain(stamped.split('-')[2]);
    const replied = log.find((e) => e.type === 'AssistantReplied' && turnOf(e) === turnId)!;
    expect(String(traceparentOf(replied))).toContain(client.traceId);

    // the read models' batches and the SSE deliveries are traces of their own, linked to this one
    await waitForSpan(receiver, (x) => x.name === 'consume read-models' && links(x, client.traceId));
    await sse.until('AssistantReplied on SSE', (f) => f.some((x) => x.event === 'AssistantReplied'));
    sse.close();
    await waitForSpan(
      receiver,
      (x) => x.name === 'sse deliver' && links(x, client.traceId) && service(x) === 'parley-api',
    );

    // log lines written under a span carry its ids
    const lines = s.stack.apis[0]
      .output()
      .split('\n')
      .flatMap((l) => (l.startsWith('{') ? [JSON.parse(l) as Record<string, unknown>] : []));
    expect(lines.some((l) => l.trace_id === client.traceId && typeof l.span_id === 'string')).toBe(true);
  }, 60_000);
});

describe('tracing (e2e): a turn resumed by another worker after a crash', () => {
  let receiver: OtlpReceiver;
  beforeAll(async () => {
    receiver = await startOtlpReceiver();
  });
  const s = useReaderStack({
    env: () => tracingEnv(receiver, 'http/protobuf'),
    fake: { defaultResponder: slowModel },
    timeoutMs: 90_000,
  });
  afterAll(() => receiver?.close());
  const { conversation, events } = s;

  it('continues the trace of the post from the log: the second worker’s run and model calls are in it', async () => {
    const client = clientSpan();
    const id = await conversation();
    const turnId = await postTraced(s, id, 'What happened to the lamp?', client.traceparent);
    const [first] = s.stack.workers;
    await s.fake.waitFor('the first model call', () => s.fake.requests.length > 0, 20_000);
    await first.kill('SIGKILL');
    // the job forgets its trace (as one queued by a sweep or an older release): the log must tell it
    await forgetJobTrace(s, `turn_${id}_${turnId}`);
    const second = await s.stack.startWorker();
    await waitForEnding(() => events(id), turnId, 30_000);

    const bySecond = (x: ReceivedSpan) => x.resource['process.pid'] === second.child.pid;
    const spans = await receiver.trace(
      client.traceId,
      (found) => found.some((x) => bySecond(x) && x.name === 'process agent-turns') && chatSpans(found).some(bySecond),
    );
    const resumed = spans.find((x) => bySecond(x) && x.name === 'process agent-turns')!;
    const posted = (await events(id)).find((e) => e.type === 'UserMessagePosted' && turnOf(e) === turnId)!;
    expect(resumed.parentSpanId).toBe(String(traceparentOf(posted)).split('-')[2]);
    expect(spans.filter(bySecond).map((x) => x.name)).toEqual(
      expect.arrayContaining(['process agent-turns', expect.stringMatching(/^chat /), 'append conversation']),
    );
  }, 90_000);
});

async function forgetJobTrace(s: ReaderStack, jobId: string): Promise<void> {
  const redis = new Redis(s.stack.env.REDIS_URL);
  try {
    const key = `${s.stack.env.QUEUE_PREFIX}:${AGENT_TURNS_QUEUE}:${jobId}`;
    const { traceparent, ...data } = JSON.parse((await redis.hget(key, 'data'))!) as Record<string, unknown>;
    expect(traceparent).toBeDefined();
    await redis.hset(key, 'data', JSON.stringify(data));
  } finally {
    redis.disconnect();
  }
}

/** Slow enough (about 2 s a call) for the worker to die mid-call. */
function slowModel(req: RecordedRequest): FakeReply {
  const last = req.body.messages.at(-1);
  const hasResults = Array.isArray(last.content) && last.content.some((b: any) => b.type === 'tool_result');
  if (!hasResults)
    return { content: [{ type: 'tool_use', name: 'search_book', input: { query: 'lamp' } }], delayMsPerChunk: 400 };
  return { content: [{ type: 'text', text: 'The lamp was relit. [1]' }], delayMsPerChunk: 40 };
}

const traceparentOf = (e: Envelope): string | undefined => e.metadata.traceparent;

const links = (span: ReceivedSpan, traceId: string) => span.links.some((l) => l.traceId === traceId);

async function waitForEnding(read: () => Promise<Envelope[]>, turnId: string, timeoutMs = 20_000): Promise<void> {
  await waitFor(
    `turn ${turnId} to end`,
    async () => (await read()).some((e) => turnOf(e) === turnId && TURN_ENDING_TYPES.includes(e.type)),
    timeoutMs,
  );
}

async function waitForSpan(receiver: OtlpReceiver, match: (s: ReceivedSpan) => boolean): Promise<void> {
  await waitFor('a span', async () => receiver.spans.some(match), 10_000);
}
