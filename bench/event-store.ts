/**
 * Figure 2, event-store appends: Parley's EventStore.append and Emmett's appendToStream, one
 * event per append with an expected version, 1 writer and 16, each for a fixed time, in private
 * databases of the same server. Figure 7, the projections rebuild, on a built log.
 */
import { randomUUID } from 'node:crypto';
import { getPostgreSQLEventStore } from '@event-driven-io/emmett-postgresql';
import { EventStore, NewEvent } from '@parley/event-store';
import { conversationStreamId } from '@parley/conversation';
import { rebuildReadModels } from '@parley/read-models';
import { createTestDatabase } from '../test/support/test-database';
import { add, anchors } from './report';
import { fmt, pct, secs } from './util';

const TEXT = 'x'.repeat(200);

/** Runs `writers` loops of `appendOne(stream, i)` for `seconds`; events/s and latencies. */
async function timed(
  writers: number,
  seconds: number,
  appendOne: (stream: string, i: number) => Promise<unknown>,
): Promise<{ perSec: number; lat: number[] }> {
  const lat: number[] = [];
  let n = 0;
  const until = performance.now() + seconds * 1000;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: writers }, async () => {
      const stream = `bench-${randomUUID()}`;
      for (let i = 0; performance.now() < until; i++) {
        const s = performance.now();
        await appendOne(stream, i);
        lat.push(performance.now() - s);
        n++;
      }
    }),
  );
  return { perSec: n / ((performance.now() - t0) / 1000), lat };
}

export async function eventStoreBench(): Promise<void> {
  const T = secs(10, 3);
  const results: Record<string, number> = {};
  const db = await createTestDatabase();
  try {
    const store = new EventStore(db.pool);
    const ev = (): NewEvent => ({ id: randomUUID(), type: 'Bench', data: { text: TEXT } });
    for (const writers of [1, 16]) {
      const r = await timed(writers, T, (s, i) =>
        store.append(s, [ev()], { expectedVersion: i === 0 ? 'no_stream' : i }),
      );
      results[`parley_${writers}`] = r.perSec;
      const raw = anchors[`insert_c${writers}`];
      const goal = writers === 16 ? '≥ 0.5 of raw' : '≥ 0.6 of raw';
      add({
        section: 'event store',
        figure: `Parley append, ${writers} writer${writers > 1 ? 's' : ''}`,
        value: `${fmt(r.perSec, 0)} events/s (p50 ${fmt(pct(r.lat, 0.5), 2)} ms, p99 ${fmt(pct(r.lat, 0.99), 2)} ms)`,
        n: r.perSec,
        anchor: raw ? `${fmt(raw, 0)} tps pgbench INSERT -c ${writers}` : undefined,
        ratio: raw ? r.perSec / raw : undefined,
        goal,
        ok: raw ? r.perSec / raw >= (writers === 16 ? 0.5 : 0.6) : undefined,
      });
    }
  } finally {
    await db.drop();
  }

  const edb = await createTestDatabase();
  await edb.pool.end();
  const emmett = getPostgreSQLEventStore(edb.url);
  try {
    await emmett.appendToStream(`warmup-${randomUUID()}`, [{ type: 'Bench', data: { text: TEXT } }]); // creates its schema
    for (const writers of [1, 16]) {
      const r = await timed(writers, T, (s, i) =>
        emmett.appendToStream(s, [{ type: 'Bench', data: { text: TEXT } }], {
          expectedStreamVersion: i === 0 ? 'STREAM_DOES_NOT_EXIST' : BigInt(i),
        }),
      );
      results[`emmett_${writers}`] = r.perSec;
      const parley = results[`parley_${writers}`];
      add({
        section: 'event store',
        figure: `Parley append vs Emmett appendToStream, ${writers} writer${writers > 1 ? 's' : ''}`,
        value: `Parley ${fmt(parley, 0)} events/s`,
        n: parley,
        anchor: `Emmett ${fmt(r.perSec, 0)} events/s (p50 ${fmt(pct(r.lat, 0.5), 2)} ms)`,
        ratio: parley / r.perSec,
        goal: writers === 16 ? '≥ 2× Emmett' : undefined,
        ok: writers === 16 ? parley / r.perSec >= 2 : undefined,
      });
    }
  } finally {
    await emmett.close().catch(() => undefined);
    // Emmett may keep idle connections without an error listener; dropping the database ends them
    // (57P01), which would be an unhandled 'error' event: ignore exactly that while dropping
    const endedByDrop = (e: unknown) => {
      if ((e as { code?: string })?.code !== '57P01') throw e;
    };
    process.on('uncaughtException', endedByDrop);
    try {
      await edb.drop();
      await new Promise((r) => setTimeout(r, 200));
    } finally {
      process.off('uncaughtException', endedByDrop);
    }
  }
}

/** Figure 7: rebuild of the `conversations` and `messages` read models over 300 conversations × 5 turns. */
export async function rebuildBench(): Promise<void> {
  const db = await createTestDatabase();
  try {
    const store = new EventStore(db.pool);
    const conversations = secs(300, 60);
    for (let c = 0; c < conversations; c++) {
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
      await store.append(conversationStreamId(randomUUID()), events, { expectedVersion: 'no_stream' });
    }
    const rebuilt = await rebuildReadModels(store);
    const perSec = rebuilt.events / (rebuilt.ms / 1000);
    add({
      section: 'projections',
      figure: 'read models rebuild (conversations + messages)',
      value: `${fmt(perSec, 0)} events/s over ${rebuilt.events} events`,
      n: perSec,
      goal: '≥ 30,000 events/s',
      ok: perSec >= 30_000,
    });
  } finally {
    await db.drop();
  }
}
