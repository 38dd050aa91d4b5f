/**
 * `npm run bench`: speed and memory of the event store, the projections and the running service
 * (API + workers as separate processes, scripted LLM), on this machine's Postgres and Redis.
 * Prints one line per figure; bench/README.md records a run.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { EventStore, checkpointOf, LOG_START, NewEvent } from '@parley/event-store';
import { conversationStreamId } from '@parley/conversation';
import { rebuildReadModels } from '@parley/read-models';
import globalSetup from '../test/support/global-setup';
import globalTeardown from '../test/support/global-teardown';
import { createTestDatabase } from '../test/support/test-database';
import { clientFor, startStack } from '../test/support/stack';
import { waitFor } from '../test/support/wait-for';
import { tinyBookMarkdown } from '../test/support/factories/books';

const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];
const fmt = (n: number, d = 1) => n.toFixed(d);
const report = (what: string, value: string) => console.log(`${what.padEnd(58)} ${value}`);
const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

async function eventStoreBench(): Promise<void> {
  const db = await createTestDatabase();
  const store = new EventStore(db.pool);
  const ev = (type = 'Bench'): NewEvent => ({ id: randomUUID(), type, data: { text: 'x'.repeat(200) } });
  try {
    const lat: number[] = [];
    const stream = `bench-${randomUUID()}`;
    let t = performance.now();
    for (let i = 0; i < 3_000; i++) {
      const s = performance.now();
      await store.append(stream, [ev()], { expectedVersion: i });
      lat.push(performance.now() - s);
    }
    let ms = performance.now() - t;
    report(
      'append, 1 writer, 1 event per append',
      `${fmt(3_000 / (ms / 1000), 0)} events/s, p50 ${fmt(pct(lat, 0.5), 2)} ms, p99 ${fmt(pct(lat, 0.99), 2)} ms`,
    );

    t = performance.now();
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        const s = `bench-${randomUUID()}`;
        for (let i = 0; i < 1_000; i++) await store.append(s, [ev()], { expectedVersion: i });
      }),
    );
    ms = performance.now() - t;
    report('append, 8 concurrent writers', `${fmt(8_000 / (ms / 1000), 0)} events/s`);

    t = performance.now();
    const batchStream = `bench-${randomUUID()}`;
    for (let i = 0; i < 100; i++)
      await store.append(
        batchStream,
        Array.from({ length: 100 }, () => ev()),
        { expectedVersion: i * 100 },
      );
    ms = performance.now() - t;
    report('append, batches of 100 events', `${fmt(10_000 / (ms / 1000), 0)} events/s`);

    t = performance.now();
    let at = LOG_START;
    let read = 0;
    for (;;) {
      const batch = await store.readAll({ after: at, limit: 1_000 });
      if (!batch.length) break;
      read += batch.length;
      at = checkpointOf(batch[batch.length - 1]);
    }
    ms = performance.now() - t;
    report('readAll tailing (batches of 1,000)', `${fmt(read / (ms / 1000), 0)} events/s over ${read} events`);

    // a realistic log for the projections: 300 conversations × 5 answered turns
    for (let c = 0; c < 300; c++) {
      const id = randomUUID();
      const events: NewEvent[] = [
        {
          id: randomUUID(),
          type: 'ConversationStarted',
          data: { ownerId: 'bench', bookId: null, title: null, readingPosition: null },
        },
      ];
      for (let turn = 0; turn < 5; turn++) {
        const turnId = randomUUID();
        const toolUseId = `toolu_${randomUUID()}`;
        events.push(
          {
            id: randomUUID(),
            type: 'UserMessagePosted',
            data: { messageId: randomUUID(), turnId, content: 'Who is the Cheshire Cat?' },
          },
          {
            id: randomUUID(),
            type: 'ToolInvoked',
            data: { turnId, toolUseId, name: 'search_book', input: { query: 'Cheshire Cat' }, iteration: 1 },
          },
          {
            id: randomUUID(),
            type: 'ToolResultRecorded',
            data: { turnId, toolUseId, content: 'p'.repeat(2_000), isError: false, chunks: [] },
          },
          {
            id: randomUUID(),
            type: 'AssistantReplied',
            data: {
              turnId,
              messageId: randomUUID(),
              content: 'a'.repeat(600),
              model: 'scripted-1',
              stopReason: 'end_turn',
              usage: {},
              costUsd: 0,
              citations: [],
              iterations: 2,
              latencyMs: 1,
            },
          },
        );
      }
      await store.append(conversationStreamId(id), events, { expectedVersion: 'no_stream' });
    }
    const rebuilt = await rebuildReadModels(store);
    report(
      'projections rebuild (conversations + messages)',
      `${fmt(rebuilt.events / (rebuilt.ms / 1000), 0)} events/s over ${rebuilt.events} events`,
    );
  } finally {
    await db.drop();
  }
}

async function serviceBench(): Promise<void> {
  const stack = await startStack({ apis: 1, workers: 2, env: { LLM_PROVIDER: 'scripted', LOG_LEVEL: 'error' } });
  try {
    const alice = clientFor(stack.base, `bench-${randomUUID()}`);
    const book = await alice.req('POST', '/v1/books', {
      title: 'Bench',
      format: 'markdown',
      content: tinyBookMarkdown(),
    });
    const conversations = await Promise.all(
      Array.from(
        { length: 100 },
        async () => (await alice.req('POST', '/v1/conversations', { bookId: book.body.id })).body.id as string,
      ),
    );
    const quiet = clientFor(stack.base, `bench-quiet-${randomUUID()}`);
    const quietId = (await quiet.req('POST', '/v1/conversations', {})).body.id as string;
    const oneByOne: number[] = [];
    for (let i = 0; i < 50; i++) {
      const s = performance.now();
      await quiet.req('POST', `/v1/conversations/${quietId}/messages?multitask=enqueue`, { content: `q${i}` });
      oneByOne.push(performance.now() - s);
    }
    report(
      'POST message → 202, one at a time',
      `p50 ${fmt(pct(oneByOne, 0.5))} ms, p95 ${fmt(pct(oneByOne, 0.95))} ms`,
    );
    await waitFor(
      'the quiet turns to drain',
      async () => {
        const items = (await quiet.req('GET', `/v1/conversations/${quietId}/events?after=0`)).body.items as any[];
        return items.filter((e) => e.type === 'AssistantReplied').length === 50;
      },
      120_000,
      200,
    );

    const postLat: number[] = [];
    const turnLat: number[] = [];
    const t = performance.now();
    await Promise.all(
      conversations.map(async (id) => {
        const s = performance.now();
        const r = await alice.req('POST', `/v1/conversations/${id}/messages`, {
          content: 'What did Marisol find in the lamp room?',
        });
        postLat.push(performance.now() - s);
        await waitFor(
          'reply',
          async () =>
            ((await alice.req('GET', `/v1/conversations/${id}/events?after=2`)).body.items as any[]).some(
              (e) => e.type === 'AssistantReplied',
            ),
          120_000,
          50,
        );
        turnLat.push(performance.now() - s);
        return r;
      }),
    );
    const ms = performance.now() - t;
    report(
      'POST message → 202 (100 concurrent)',
      `p50 ${fmt(pct(postLat, 0.5))} ms, p95 ${fmt(pct(postLat, 0.95))} ms`,
    );
    report(
      'turn: post → AssistantReplied (scripted LLM, 2 workers)',
      `p50 ${fmt(pct(turnLat, 0.5))} ms, p95 ${fmt(pct(turnLat, 0.95))} ms, ${fmt(100 / (ms / 1000))} turns/s`,
    );

    const id = conversations[0];
    const rssBefore = rssMb(stack.apis[0].child.pid!);
    const version = (await alice.req('GET', `/v1/conversations/${id}`)).body.version as number;
    const clients = Array.from({ length: 500 }, () =>
      fetch(`${stack.base}/v1/conversations/${id}/stream?after=${version}`, { headers: alice.auth }).then((r) => ({
        r,
        reader: r.body!.getReader(),
      })),
    );
    const opened = await Promise.all(clients);
    const renamedAt = performance.now();
    await alice.req('PATCH', `/v1/conversations/${id}`, { title: 'fan-out' });
    const arrivals = await Promise.all(
      opened.map(async ({ reader }) => {
        const dec = new TextDecoder();
        let buf = '';
        while (!buf.includes('ConversationRenamed')) {
          const { value, done } = await reader.read();
          if (done) break;
          buf += dec.decode(value);
        }
        return performance.now() - renamedAt;
      }),
    );
    const rssAfter = rssMb(stack.apis[0].child.pid!);
    report(
      'SSE fan-out: 500 clients on one conversation',
      `all received in ${fmt(Math.max(...arrivals))} ms (p50 ${fmt(pct(arrivals, 0.5))} ms)`,
    );
    report(
      'API memory with 500 open SSE streams',
      `${fmt(rssAfter, 0)} MB RSS (${fmt(rssBefore, 0)} MB before, ${fmt(((rssAfter - rssBefore) * 1024) / 500, 0)} KB a stream)`,
    );
    await Promise.all(opened.map(({ reader }) => reader.cancel().catch(() => undefined)));
  } finally {
    await stack.stop();
  }
}

async function main(): Promise<void> {
  await globalSetup();
  try {
    console.log(`parley bench — ${new Date().toISOString()}`);
    await eventStoreBench();
    await serviceBench();
  } finally {
    await globalTeardown();
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
