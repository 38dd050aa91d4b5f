/**
 * Figure 3, the floor: the path of a turn with nothing in it, built here with plain `pg` and
 * `bullmq`: INSERT+NOTIFY → LISTEN → Queue.add → a Worker → INSERT+NOTIFY → LISTEN seen.
 * Sequential runs; p50/p99 are what a turn through the product is compared to.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { Queue, Worker } from 'bullmq';
import { Client } from 'pg';
import { createTestDatabase, redisUrl } from '../test/support/test-database';
import { add, anchors } from './report';
import { roundTripAnchor } from './round-trip';
import { fmt, pct, secs } from './util';

const INSERT = `INSERT INTO events (event_id, stream_id, version, type, data) VALUES ($1, $2, 1, $3, $4)`;

export async function floorBench(): Promise<void> {
  const db = await createTestDatabase();
  const r = new URL(redisUrl());
  const connection = { host: r.hostname, port: Number(r.port || 6379), maxRetriesPerRequest: null };
  const prefix = `bench${randomBytes(4).toString('hex')}`;
  const listener = new Client({ connectionString: db.url });
  const writer = new Client({ connectionString: db.url });
  let queue: Queue | undefined;
  let worker: Worker | undefined;
  try {
    await listener.connect();
    await writer.connect();
    queue = new Queue('floor', { connection, prefix });
    const waiting = new Map<string, () => void>();
    worker = new Worker(
      'floor',
      async (job) => {
        const client = await db.pool.connect();
        try {
          await client.query('BEGIN');
          await client.query(INSERT, [randomUUID(), `out-${job.data.id}`, 'Replied', { text: 'ok' }]);
          await client.query(`SELECT pg_notify('floor_out', $1)`, [job.data.id]);
          await client.query('COMMIT');
        } finally {
          client.release();
        }
      },
      { connection, prefix, concurrency: 16 },
    );
    await worker.waitUntilReady();
    listener.on('notification', (n) => {
      if (n.channel === 'floor_in') void queue!.add('turn', { id: n.payload }, { removeOnComplete: true });
      else if (n.channel === 'floor_out') waiting.get(n.payload!)?.();
    });
    await listener.query('LISTEN floor_in');
    await listener.query('LISTEN floor_out');
    const lat: number[] = [];
    const runs = secs(300, 60);
    for (let i = 0; i < runs + 20; i++) {
      const id = randomUUID();
      const seen = new Promise<void>((res) => waiting.set(id, res));
      const s = performance.now();
      await writer.query('BEGIN');
      await writer.query(INSERT, [randomUUID(), `in-${id}`, 'Posted', { text: 'q' }]);
      await writer.query(`SELECT pg_notify('floor_in', $1)`, [id]);
      await writer.query('COMMIT');
      await seen;
      waiting.delete(id);
      if (i >= 20) lat.push(performance.now() - s); // the first 20 warm up
    }
    anchors.floor_p50 = pct(lat, 0.5);
    anchors.floor_p99 = pct(lat, 0.99);
    add({
      section: 'floor',
      figure: `INSERT+NOTIFY → LISTEN → Queue.add → Worker → INSERT+NOTIFY → LISTEN (${runs} sequential)`,
      value: `p50 ${fmt(anchors.floor_p50, 2)} ms, p99 ${fmt(anchors.floor_p99, 2)} ms`,
      n: anchors.floor_p50,
    });
    // the turn overhead's other anchor: what a turn would cost with nothing between the HTTP request and its SSE frame
    const trip = await roundTripAnchor(runs);
    anchors.round_trip_p50 = trip.p50Ms;
    anchors.round_trip_p99 = trip.p99Ms;
    add({
      section: 'floor',
      figure: `bare HTTP POST → INSERT → SSE frame round trip, node:http and pg alone (${runs} sequential)`,
      value: `p50 ${fmt(trip.p50Ms, 2)} ms, p99 ${fmt(trip.p99Ms, 2)} ms`,
      n: trip.p50Ms,
    });
  } finally {
    await worker?.close().catch(() => undefined);
    if (queue) {
      await queue.obliterate({ force: true }).catch(() => undefined);
      await queue.close().catch(() => undefined);
    }
    await listener.end().catch(() => undefined);
    await writer.end().catch(() => undefined);
    await db.drop();
  }
}
