/**
 * The turn overhead's anchor: a bare HTTP + INSERT + SSE round trip. node:http and pg alone, in a
 * process of their own as the API is: `GET /stream` is an SSE stream; `POST /post` INSERTs a row
 * into `events` (the migrated table), answers 202, and writes a frame to the open streams. The
 * bench process opens a stream, then POSTs one at a time and times each POST until its frame
 * arrives: what a turn would cost with no auth, no validation, no queue and no model.
 *
 *   node dist/bench/round-trip.js [runs=300]
 */
import { fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer, ServerResponse } from 'node:http';
import net from 'node:net';
import { Pool } from 'pg';
import globalSetup from '../test/support/global-setup';
import globalTeardown from '../test/support/global-teardown';
import { createTestDatabase } from '../test/support/test-database';
import { pct } from './util';

const INSERT = `INSERT INTO events (event_id, stream_id, version, type, data) VALUES ($1, $2, $3, 'Posted', $4)`;

function runServer(databaseUrl: string): void {
  const pool = new Pool({ connectionString: databaseUrl, max: 4 });
  const streams = new Set<ServerResponse>();
  let version = 0;
  const server = createServer((req, res) => {
    if (req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
      res.write('retry: 20\n\n');
      streams.add(res);
      res.on('close', () => streams.delete(res));
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString()) as { id: string };
      const v = ++version;
      pool.query(INSERT, [randomUUID(), 'round-trip', v, { id: body.id }]).then(
        () => {
          res.writeHead(202, { 'content-type': 'application/json' }).end(JSON.stringify({ version: v }));
          const frame = Buffer.from(`id: ${v}\nevent: Posted\ndata: ${JSON.stringify({ id: body.id })}\n\n`);
          for (const s of streams) s.write(frame);
        },
        (e: Error) => res.writeHead(500).end(e.message),
      );
    });
  });
  server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as net.AddressInfo).port }));
}

/** p50/p99 of `runs` sequential round trips, after 20 of warm-up. */
export async function roundTripAnchor(runs: number): Promise<{ p50Ms: number; p99Ms: number }> {
  const db = await createTestDatabase();
  const server = fork(__filename, ['--server', db.url], { stdio: 'inherit' });
  try {
    const port = await new Promise<number>((resolve) =>
      server.once('message', (m: { port: number }) => resolve(m.port)),
    );
    const waiting = new Map<string, () => void>();
    const stream = net.connect(port, '127.0.0.1');
    stream.write('GET /stream HTTP/1.1\r\nHost: x\r\n\r\n');
    stream.on('data', (chunk: Buffer) => {
      for (const m of chunk.toString().matchAll(/"id":"([0-9a-f-]{36})"/g)) waiting.get(m[1])?.();
    });
    const lat: number[] = [];
    for (let i = 0; i < runs + 20; i++) {
      const id = randomUUID();
      const seen = new Promise<void>((r) => waiting.set(id, r));
      const started = performance.now();
      const res = await fetch(`http://127.0.0.1:${port}/post`, { method: 'POST', body: JSON.stringify({ id }) });
      if (res.status !== 202) throw new Error(`the round trip's POST answered ${res.status}: ${await res.text()}`);
      await res.arrayBuffer();
      await seen;
      waiting.delete(id);
      if (i >= 20) lat.push(performance.now() - started);
    }
    stream.destroy();
    return { p50Ms: pct(lat, 0.5), p99Ms: pct(lat, 0.99) };
  } finally {
    server.kill();
    await db.drop();
  }
}

if (require.main === module) {
  const at = process.argv.indexOf('--server');
  if (at >= 0) runServer(process.argv[at + 1]);
  else {
    const runs = Number(process.argv[2] ?? 300);
    globalSetup()
      .then(() => roundTripAnchor(runs))
      .then(async (r) => {
        console.log(
          `bare HTTP + INSERT + SSE round trip, ${runs} sequential: p50 ${r.p50Ms.toFixed(2)} ms, p99 ${r.p99Ms.toFixed(2)} ms`,
        );
        await globalTeardown();
        process.exit(0);
      })
      .catch((e) => {
        console.error(e);
        process.exit(1);
      });
  }
}
