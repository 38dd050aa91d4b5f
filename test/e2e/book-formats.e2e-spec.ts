/**
 * Books as publishers hold them (issue 54), against the real processes: an EPUB 3 (nav), an
 * EPUB 2 (NCX), an HTML page and a Word document, built in code and uploaded as multipart with
 * their media types, are ingested with their own chapters, titles and authors, searched and
 * cited by their chapter titles, and the reading position counts the EPUB's chapters; hostile
 * archives fail with 422 problems of their own within the parser's bounds, while another reader
 * is served.
 */
import { TURN_ENDING_TYPES } from '@parley/conversation';
import * as fixtures from '../support/book-fixtures';
import { conversationHelpers } from '../support/conversation-helpers';
import { waitForBook } from '../support/factories/books';
import { inMiB, sampleMemory } from '../support/process-memory';
import { Client, clientFor, startStack, Stack } from '../support/stack';
import { startBystander } from '../support/bystander';
import { waitFor } from '../support/wait-for';

const GiB = 1024 ** 3;

/** POST /v1/books as multipart: the file as a part of its media type (named `name`), and fields. */
async function upload(c: Client, bytes: Buffer, name: string, type: string, fields: Record<string, string> = {}) {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  form.append('file', new Blob([bytes], { type }), name);
  const res = await fetch(`${c.base}/v1/books`, { method: 'POST', headers: c.auth, body: form });
  return { status: res.status, body: (await res.json()) as any };
}

const EPUB = 'application/epub+zip';
const HTML = 'text/html';
const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

type Facts = {
  title: string;
  author: string;
  chapters: { index: number; title: string }[];
  passages: { q: string; chapter: string; text: string }[];
};

describe('book formats (e2e)', () => {
  let stack: Stack;
  let reader: Client;
  // built before the stack starts: seconds of CPU between two requests would let the API's
  // keep-alive timeout close the socket fetch is about to reuse
  const built: Record<string, Buffer> = {};
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    built.epub3 = await fixtures.epub3Book();
    built.epub2 = await fixtures.epub2Book();
    built.html = Buffer.from(fixtures.htmlBook());
    built.docx = await fixtures.docxBook();
    built.bomb = await fixtures.zipBombEpub(256);
    built.lying = await fixtures.lyingZipBombEpub(256);
    built.many = await fixtures.manyEntriesEpub();
    built.traversal = await fixtures.pathTraversalEpub();
    built.laughs = await fixtures.billionLaughsEpub();
    built.xxe = await fixtures.externalEntityEpub();
    built.drm = await fixtures.encryptedEpub();
    built.docxLaughs = await fixtures.billionLaughsDocx();
    built.docxBomb = await fixtures.zipBombDocx(256);
    stack = await startStack({ workers: 1 });
    reader = clientFor(stack.base, 'reader');
  }, 120_000);
  afterAll(() => stack?.stop());

  const honest: [string, string, string, Facts][] = [
    // named without an extension: the media type alone tells the format
    ['epub3', 'saltmarsh', EPUB, fixtures.EPUB3_FACTS],
    ['epub2', 'orchard.epub', EPUB, fixtures.EPUB2_FACTS],
    ['html', 'tides', HTML, fixtures.HTML_FACTS],
    ['docx', 'coastal-geology', DOCX, fixtures.DOCX_FACTS],
  ];

  it.each(honest)(
    'ingests the %s book with its chapters, its title and author, and finds its passages by chapter title',
    async (key, name, type, facts) => {
      const accepted = await upload(reader, built[key], name, type);
      expect(accepted.status).toBe(202);
      const book = await waitForBook(reader, accepted.body.id, 60_000);
      ids[key] = book.id;
      expect(book).toMatchObject({ title: facts.title, author: facts.author, chapters: facts.chapters });
      for (const p of facts.passages) {
        const hits = await reader.req('GET', `/v1/books/${book.id}/search?q=${encodeURIComponent(p.q)}&k=3`);
        expect(hits.status).toBe(200);
        expect(hits.body.items[0].chapter).toBe(p.chapter);
        expect(hits.body.items[0].text).toContain(p.text);
      }
    },
    90_000,
  );

  it("finds an EPUB's notes, alt text and captions in their chapters, and none of its front and back matter", async () => {
    const f = fixtures.EPUB3_FACTS;
    const search = async (q: string) =>
      (await reader.req('GET', `/v1/books/${ids.epub3}/search?q=${encodeURIComponent(q)}&k=5`)).body.items as {
        chapter: string;
        section: string | null;
        text: string;
      }[];
    for (const p of [f.footnote, f.endnote, f.alt, f.caption]) {
      const [hit] = await search(p.q);
      expect({ q: p.q, chapter: hit?.chapter, found: hit?.text.includes(p.text) }).toEqual({
        q: p.q,
        chapter: p.chapter,
        found: true,
      });
    }
    expect((await search('willow crossing'))[0]).toMatchObject({
      chapter: 'Chapter 3: The River',
      section: 'The Ford',
    });
    for (const word of f.dropped) expect(await search(word)).toEqual([]);
  });

  it("keeps the reader's reading position in the EPUB's own chapters: nothing past it is searched or cited", async () => {
    const { ask, events } = conversationHelpers(() => reader);
    const created = await reader.req('POST', '/v1/conversations', { bookId: ids.epub3, readingPosition: 2 });
    expect(created.status).toBe(201);
    const id = created.body.id as string;

    const before = await ask(id, 'What did the brass compass always point toward?');
    expect(before.ending.type).toBe('AssistantReplied');
    const cited = (before.ending.data as { citations: { chapter: string; chapterIndex: number }[] }).citations;
    expect(cited.length).toBeGreaterThan(0);
    expect(cited[0]).toMatchObject({ chapter: 'Chapter 2: The Compass', chapterIndex: 2 });

    // chapter 3 is past the position: the search finds nothing of it, the answer cites nothing of it
    const spoiler = await ask(id, 'Where did they cross the ford at the willow crossing?');
    const turn = (await events(id)).filter((e) => (e.data as { turnId?: string }).turnId === spoiler.turnId);
    expect(turn.some((e) => TURN_ENDING_TYPES.includes(e.type))).toBe(true);
    expect(JSON.stringify(turn)).not.toMatch(/willow crossing while|Chapter 3: The River/);
    const found = turn.flatMap((e) => (e.data as { chunks?: { chapterIndex: number }[] }).chunks ?? []);
    expect(found.every((c) => c.chapterIndex <= 2)).toBe(true);

    // lifted, the same question is answered from chapter 3, cited by its title
    expect((await reader.req('PATCH', `/v1/conversations/${id}`, { readingPosition: null })).status).toBe(200);
    const after = await ask(id, 'Where did they cross the ford at the willow crossing?');
    expect((after.ending.data as { citations: unknown[] }).citations).toContainEqual(
      expect.objectContaining({ chapter: 'Chapter 3: The River', chapterIndex: 3, section: 'The Ford' }),
    );
  }, 60_000);

  it('fails hostile archives with 422 problems of their own, within the bounds, while another reader is served', async () => {
    const hostile: [string, string, string, string][] = [
      ['bomb', 'bomb.epub', EPUB, 'book_zip_bomb'],
      ['lying', 'lying.epub', EPUB, 'book_zip_bomb'],
      ['many', 'many.epub', EPUB, 'book_zip_bomb'],
      ['traversal', 'traversal.epub', EPUB, 'book_zip_unsafe_path'],
      ['laughs', 'laughs.epub', EPUB, 'book_xml_entities'],
      ['xxe', 'xxe.epub', EPUB, 'book_xml_entities'],
      ['drm', 'drm.epub', EPUB, 'book_encrypted'],
      ['docxLaughs', 'laughs.docx', DOCX, 'book_xml_entities'],
      ['docxBomb', 'bomb.docx', DOCX, 'book_zip_bomb'],
    ];
    const memory = sampleMemory(stack);
    const bystander = startBystander(stack.base);

    const started = Date.now();
    // three users at a time: each may have two books ingesting
    const users = ['mallory', 'trudy', 'eve'].map((u) => clientFor(stack.base, u));
    const outcomes: { key: string; code: string; status: number; ms: number }[] = [];
    for (let i = 0; i < hostile.length; i += users.length) {
      await Promise.all(
        hostile.slice(i, i + users.length).map(async ([key, name, type], j) => {
          const c = users[j];
          const accepted = await upload(c, built[key], name, type);
          expect({ key, status: accepted.status }).toEqual({ key, status: 202 });
          let book: any;
          await waitFor(
            `${key} to fail`,
            async () => (book = (await c.req('GET', `/v1/books/${accepted.body.id}`)).body).status !== 'ingesting',
            60_000,
            50,
          );
          // the problem kind, as the API's catalogue serves it
          const kind = (await (await fetch(`${stack.base}/problems/${book.error?.code}`)).json()) as { status: number };
          outcomes.push({ key, code: book.error?.code, status: kind.status, ms: Date.now() - started });
        }),
      );
    }
    const { latencies, statuses } = await bystander.stop();
    memory.stop();

    const sorted = [...latencies].sort((a, b) => a - b);
    const p99 = sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))];
    console.log(
      `hostile archives: ${JSON.stringify(outcomes)}; peak RSS MiB: ${JSON.stringify(inMiB(memory.peak))}; ` +
        `bystander p99 ${p99} ms, max ${sorted.at(-1)} ms over ${latencies.length} requests`,
    );
    for (const [key, , , code] of hostile) {
      expect(outcomes.find((o) => o.key === key)).toEqual({ key, code, status: 422, ms: expect.any(Number) });
    }
    expect(Date.now() - started).toBeLessThan(60_000);
    expect(memory.peak.parser).toBeLessThan(1.5 * GiB);
    expect(memory.peak.worker).toBeLessThan(1.5 * GiB);
    expect(statuses).toEqual([200]);
    expect(latencies.length).toBeGreaterThan(3);
    // the target is 500 ms (about 250 ms measured here); twice that leaves room for a loaded CI machine
    expect(p99).toBeLessThan(1000);
    // nothing of them is kept but their rows, which say why
    const { rows } = await stack.db.pool.query(
      `SELECT count(*)::int AS uploads, (SELECT count(*)::int FROM book_chunks c JOIN books b ON b.id = c.book_id
         WHERE b.status = 'failed') AS chunks FROM book_uploads`,
    );
    expect(rows[0]).toEqual({ uploads: 0, chunks: 0 });
  }, 180_000);
});
