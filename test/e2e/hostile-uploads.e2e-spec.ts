/**
 * Hostile uploads against the real processes: decompression bombs fail in bounded time and
 * memory while a bystander is served, and an honest 20 MB book ingests with visible progress.
 * Memory is sampled from /proc (Linux) for the api, the worker and the worker's parser children.
 */
import { clientFor, startStack, Stack, tokenFor } from '../support/stack';
import { inMiB, sampleMemory } from '../support/process-memory';
import { honestBook, pdfBomb } from '../support/hostile-books';
import { startBystander } from '../support/bystander';
import { waitFor } from '../support/wait-for';

const GiB = 1024 ** 3;

/** A multipart upload (the stack's JSON client does not send forms). */
async function uploadFile(base: string, user: string, bytes: Buffer | string, name: string) {
  const form = new FormData();
  form.append('file', new Blob([bytes]), name);
  const res = await fetch(`${base}/v1/books`, {
    method: 'POST',
    headers: { authorization: `Bearer ${tokenFor(user)}` },
    body: form,
  });
  return { status: res.status, body: (await res.json()) as any };
}

describe('hostile uploads (e2e)', () => {
  let stack: Stack;
  // generated before the stack starts: seconds of CPU between two requests would let the API's
  // keep-alive timeout (5 s) close the socket fetch is about to reuse (ECONNRESET)
  let bomb: Buffer;
  let honest: string;

  beforeAll(async () => {
    bomb = pdfBomb(400); // ~400 KB that inflate to 400 MiB
    honest = honestBook(19.5);
    stack = await startStack({ workers: 1, env: { AGENT_ENABLED: 'false' } });
  }, 60_000);
  afterAll(() => stack?.stop());

  it('fails three decompression bombs at once within 60 s, under 1.5 GiB a process, while a bystander is served', async () => {
    const memory = sampleMemory(stack);
    const bystander = startBystander(stack.base);

    const started = Date.now();
    const outcomes = await Promise.all(
      ['mallory', 'trudy', 'eve'].map(async (user) => {
        const c = clientFor(stack.base, user);
        const accepted = await uploadFile(stack.base, user, bomb, 'bomb.pdf');
        if (accepted.status !== 202)
          return { status: accepted.status, ms: Date.now() - started, code: accepted.body?.code };
        let book: any;
        await waitFor(
          'the bomb to fail',
          async () => (book = (await c.req('GET', `/v1/books/${accepted.body.id}`)).body).status !== 'ingesting',
          60_000,
          100,
        );
        return { status: book.status, code: book.error?.code, ms: Date.now() - started };
      }),
    );
    const { latencies, statuses } = await bystander.stop();
    memory.stop();

    console.log(
      `bombs: ${JSON.stringify(outcomes)}; peak RSS MiB: ${JSON.stringify(inMiB(memory.peak))}; parser processes seen: ${memory.parsers.size}; bystander max ${Math.max(...latencies)} ms over ${latencies.length} requests`,
    );
    for (const o of outcomes) {
      expect([o.status, o.code]).toEqual(['failed', 'book_too_large_when_expanded']);
      expect(o.ms).toBeLessThan(60_000);
    }
    expect(memory.peak.api).toBeLessThan(1.5 * GiB);
    expect(memory.peak.worker).toBeLessThan(1.5 * GiB);
    expect(memory.peak.parser).toBeLessThan(1.5 * GiB);
    expect(statuses).toEqual([200]);
    expect(latencies.length).toBeGreaterThan(3);
    expect((await fetch(`${stack.base}/readyz`)).status).toBe(200);
    // nothing of the bombs is kept but their rows
    const { rows } = await stack.db.pool.query('SELECT count(*)::int AS n FROM book_uploads');
    expect(rows[0].n).toBe(0);
  }, 120_000);

  it('ingests an honest 20 MB book with progress on its SSE stream, answering 202 at once', async () => {
    const text = honest;
    const t0 = Date.now();
    const accepted = await uploadFile(stack.base, 'reader', text, 'big.txt');
    const acceptMs = Date.now() - t0;
    expect(accepted.status).toBe(202);
    expect(accepted.body.status).toBe('ingesting');
    expect(acceptMs).toBeLessThan(5_000);

    const res = await fetch(`${stack.base}/v1/books/${accepted.body.id}/events?access_token=${tokenFor('reader')}`);
    let sse = '';
    for await (const chunk of res.body!) sse += Buffer.from(chunk).toString();
    const ms = Date.now() - t0;
    const frames = [...sse.matchAll(/event: (\w+)\ndata: (.*)\n/g)].map((m) => ({
      event: m[1],
      book: JSON.parse(m[2]),
    }));
    const storing = frames.filter((f) => f.event === 'progress' && f.book.progress.phase === 'storing');
    const written = storing.map((f) => f.book.progress.chunksWritten);
    console.log(
      `honest book: ${(text.length / 1024 / 1024).toFixed(1)} MB accepted in ${acceptMs} ms, ready in ${ms} ms ` +
        `(${(text.length / 1024 / 1024 / (ms / 1000)).toFixed(2)} MB/s), ${frames.length} frames, ${storing.length} while storing`,
    );
    expect(frames.at(-1)).toMatchObject({ event: 'ready', book: { status: 'ready', chapters: expect.any(Array) } });
    expect(frames.at(-1)!.book.chapters).toHaveLength(60);
    expect(storing.length).toBeGreaterThan(2);
    expect(written).toEqual([...written].sort((a, b) => a - b));
    expect(written.at(-1)).toBeLessThanOrEqual(frames.at(-1)!.book.chunkCount);
  }, 240_000);
});
