import { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { AddressInfo } from 'node:net';
import path from 'node:path';
import { BookIngest, MAX_BOOK_BYTES } from '@parley/books';
import { projectRoot } from '@parley/platform';
import { mintToken } from '../../apps/api/src/auth/auth.guard';
import { startApiApp } from '../support/api-app';
import {
  DOCX_FACTS,
  docxBook,
  encryptedEpub,
  EPUB2_FACTS,
  epub2Book,
  EPUB3_FACTS,
  epub3Book,
  HTML_FACTS,
  htmlBook,
} from '../support/book-fixtures';
import { pdfBomb } from '../support/hostile-books';
import { minimalPdf } from '../support/minimal-pdf';
import { createTestDatabase, TestDatabase } from '../support/test-database';

const SECRET = 'books-http-test-secret-0123456789';
const alice = readFileSync(path.join(projectRoot(), 'data/books/alice.txt'));

describe('books HTTP API', () => {
  let db: TestDatabase;
  let app: INestApplication;
  let base: string;
  const userA = `a-${randomUUID()}`;
  const userB = `b-${randomUUID()}`;

  // generated before any request: seconds of CPU between two requests would let the server's
  // keep-alive timeout (5 s) close the socket fetch is about to reuse (ECONNRESET)
  let bomb: Buffer;

  beforeAll(async () => {
    bomb = pdfBomb(100);
    db = await createTestDatabase();
    app = await startApiApp(db, SECRET);
    base = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}/v1`;
  });
  afterAll(async () => {
    await app.close();
    await db.drop();
  });

  const call = async (user: string, method: string, url: string, body?: unknown) => {
    const headers: Record<string, string> = { authorization: `Bearer ${await mintToken(user, SECRET)}` };
    let payload: FormData | string | undefined;
    if (body instanceof FormData) payload = body;
    else if (body !== undefined) {
      headers['content-type'] = 'application/json';
      payload = JSON.stringify(body);
    }
    const res = await fetch(base + url, { method, headers, body: payload });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  /** POST /books: 202 with the book ingesting; then the worker's part, run here, and the book as GET shows it. */
  const upload = async (user: string, body: unknown) => {
    const accepted = await call(user, 'POST', '/books', body);
    if (accepted.status !== 202) return { ...accepted, accepted: undefined };
    expect(accepted.body).toMatchObject({ status: 'ingesting', progress: { phase: 'queued', chunksWritten: 0 } });
    await app.get(BookIngest, { strict: false }).process(accepted.body.id);
    return { ...(await call(user, 'GET', `/books/${accepted.body.id}`)), accepted: accepted.body };
  };
  const form = (file: Blob, name: string, fields: Record<string, string> = {}) => {
    const f = new FormData();
    for (const [k, v] of Object.entries(fields)) f.append(k, v);
    f.append('file', file, name);
    return f;
  };

  it('ingests JSON text, lists, shows, searches and deletes it', async () => {
    const content = 'Chapter 1\n\nThe owl flew over the barn.\n\nChapter 2\n\nThe fox slept under the hedge.';
    const created = await upload(userA, { title: 'Two Chapters', author: 'Anon', format: 'text', content });
    expect(created.accepted).toEqual({
      id: expect.any(String),
      title: 'Two Chapters',
      author: 'Anon',
      format: 'text',
      visibility: 'private',
      status: 'ingesting',
      chapters: [],
      chunkCount: 0,
      progress: { phase: 'queued', bytesTotal: content.length, chunksWritten: 0 },
      createdAt: expect.any(String),
    });
    expect(created).toMatchObject({
      status: 200,
      body: {
        id: created.accepted.id,
        title: 'Two Chapters',
        author: 'Anon',
        format: 'text',
        status: 'ready',
        chapters: [
          { index: 1, title: 'Chapter 1' },
          { index: 2, title: 'Chapter 2' },
        ],
        chunkCount: 2,
        progress: { phase: 'done', bytesTotal: content.length, chunksWritten: 2, chunksTotal: 2 },
        createdAt: created.accepted.createdAt,
      },
    });
    expect(created.body).not.toHaveProperty('error');
    const id = created.body.id;
    expect(await call(userA, 'GET', '/books')).toEqual({
      status: 200,
      body: { items: [created.body], nextCursor: null },
    });
    expect(await call(userA, 'GET', `/books/${id}`)).toEqual({ status: 200, body: created.body });

    const search = await call(
      userA,
      'GET',
      `/books/${id}/search?q=${encodeURIComponent('where did the fox sleep?')}&k=1`,
    );
    expect(search.status).toBe(200);
    expect(search.body.items).toEqual([
      {
        chunkId: expect.any(String),
        chapter: 'Chapter 2',
        chapterIndex: 2,
        section: null,
        page: null,
        text: 'The fox slept under the hedge.',
        score: expect.any(Number),
      },
    ]);

    expect(await call(userA, 'DELETE', `/books/${id}`)).toEqual({ status: 204, body: undefined });
    expect((await call(userA, 'GET', `/books/${id}`)).status).toBe(404);
    expect((await call(userA, 'DELETE', `/books/${id}`)).status).toBe(404);
  });

  it("answers 404 for another user's book, 400 for a bad id", async () => {
    const created = await upload(userA, {
      title: 'Private',
      format: 'markdown',
      content: '# One\n\nSecret text.',
    });
    const id = created.body.id;
    for (const [method, url] of [
      ['GET', `/books/${id}`],
      ['GET', `/books/${id}/search?q=secret`],
      ['DELETE', `/books/${id}`],
    ]) {
      expect(await call(userB, method, url)).toMatchObject({
        status: 404,
        body: { status: 404, code: 'book_not_found', statusCode: 404, error: 'Not Found', message: 'book not found' },
      });
    }
    expect((await call(userB, 'GET', '/books')).body.items).toEqual([]);
    expect((await call(userA, 'GET', `/books/${id}`)).status).toBe(200);
    expect(await call(userA, 'GET', '/books/not-a-uuid')).toMatchObject({
      status: 400,
      body: {
        code: 'validation_failed',
        errors: [{ field: 'id', message: 'id must be a UUID' }],
        statusCode: 400,
        error: 'Bad Request',
        message: ['id must be a UUID'],
      },
    });
    expect((await call(userA, 'GET', `/books/${randomUUID()}`)).status).toBe(404);
  });

  it('uploads a multipart file, taking the title from the file name', async () => {
    const res = await upload(
      userA,
      form(new Blob([alice], { type: 'text/plain' }), 'alice.txt', { author: 'Lewis Carroll' }),
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ title: 'alice', author: 'Lewis Carroll', format: 'text' });
    expect(res.body.chapters).toHaveLength(12);
    const hits = await call(userA, 'GET', `/books/${res.body.id}/search?q=Cheshire%20Cat%20grin&k=3`);
    expect(hits.body.items).toHaveLength(3);
    expect(hits.body.items[0].chapter).toBe('CHAPTER VI. Pig and Pepper');
  });

  it('takes a PDF as a file or as base64 JSON, with pages', async () => {
    const pdf = minimalPdf([
      ['Chapter 1', '', 'The kettle boiled.'],
      ['Chapter 2', '', 'The lantern was lit at dusk.'],
    ]);
    const viaFile = await upload(userA, form(new Blob([pdf]), 'lamps.pdf', { title: 'Lamps' }));
    expect(viaFile.status).toBe(200);
    expect(viaFile.body).toMatchObject({ title: 'Lamps', format: 'pdf', chunkCount: 2 });
    const viaJson = await upload(userA, {
      title: 'Lamps',
      format: 'pdf',
      content: pdf.toString('base64'),
    });
    expect(viaJson.body.status).toBe('ready');
    const hits = await call(userA, 'GET', `/books/${viaJson.body.id}/search?q=lantern`);
    expect(hits.body.items[0]).toMatchObject({ chapterIndex: 2, page: 2 });
  });

  it('takes EPUB, HTML and DOCX by their media types, with their chapters and the title they state', async () => {
    const types: [Buffer, string, typeof EPUB3_FACTS | typeof HTML_FACTS | typeof DOCX_FACTS][] = [
      [await epub3Book(), 'application/epub+zip', EPUB3_FACTS],
      [Buffer.from(htmlBook()), 'text/html; charset=utf-8', HTML_FACTS],
      [await docxBook(), 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', DOCX_FACTS],
    ];
    for (const [bytes, type, facts] of types) {
      // named without an extension: the part's media type tells the format
      const res = await upload(userA, form(new Blob([bytes], { type }), 'upload'));
      expect(res.accepted).toMatchObject({ title: 'upload', author: null });
      expect(res.body).toMatchObject({
        status: 'ready',
        title: facts.title,
        author: facts.author,
        chapters: facts.chapters,
      });
      const q = encodeURIComponent(facts.passages[1].q);
      const hits = await call(userA, 'GET', `/books/${res.body.id}/search?q=${q}&k=1`);
      expect(hits.body.items[0]).toMatchObject({ chapter: facts.passages[1].chapter });
      expect(hits.body.items[0].text).toContain(facts.passages[1].text);
    }
  });

  it("keeps the uploader's title and author over the EPUB's, as JSON (base64) or multipart", async () => {
    const epub = await epub2Book();
    const viaJson = await upload(userA, { title: 'Mine', format: 'epub', content: epub.toString('base64') });
    expect(viaJson.body).toMatchObject({ status: 'ready', title: 'Mine', author: EPUB2_FACTS.author, format: 'epub' });
    const viaFile = await upload(userA, form(new Blob([epub]), 'orchard.epub', { title: 'Ours', author: 'Us' }));
    expect(viaFile.body).toMatchObject({
      status: 'ready',
      title: 'Ours',
      author: 'Us',
      chapters: EPUB2_FACTS.chapters,
    });
  });

  it('fails a DRM-encrypted EPUB with book_encrypted, keeping nothing but the row that says why', async () => {
    const userF = `f-${randomUUID()}`;
    const accepted = await call(userF, 'POST', '/books', form(new Blob([await encryptedEpub()]), 'locked.epub'));
    expect(accepted.status).toBe(202);
    const id = accepted.body.id;
    await expect(app.get(BookIngest, { strict: false }).process(id)).rejects.toMatchObject({
      status: 422,
      code: 'book_encrypted',
    });
    expect((await call(userF, 'GET', `/books/${id}`)).body).toMatchObject({
      status: 'failed',
      title: 'locked',
      error: { code: 'book_encrypted', message: expect.stringMatching(/DRM/) },
    });
    for (const table of ['book_uploads', 'book_chunks', 'book_terms'])
      expect((await db.pool.query(`SELECT 1 FROM ${table} WHERE book_id = $1`, [id])).rowCount).toBe(0);
  });

  it.each([
    ['no fields', {}, 400, /title is required/],
    ['an unknown format', { title: 'x', format: 'mobi', content: 'x' }, 400, /format must be one of/],
    ['a long title', { title: 'x'.repeat(201), format: 'text', content: 'x' }, 400, /title must be shorter/],
    [
      'an unknown field',
      { title: 'x', format: 'text', content: 'x', isbn: '1' },
      400,
      /property isbn should not exist/,
    ],
    ['empty content', { title: 'x', format: 'text', content: '' }, 400, /empty/],
    ['text without letters', { title: 'x', format: 'text', content: '\n\n  \n' }, 400, /no text/],
    [
      'binary text (NUL is refused while parsing)',
      { title: 'x', format: 'text', content: 'PK\u0000\u0003' },
      400,
      /NUL/,
    ],
    ['a PDF that is not base64', { title: 'x', format: 'pdf', content: '%PDF-1.4 !!' }, 400, /base64/],
    [
      'a PDF that is not a PDF',
      { title: 'x', format: 'pdf', content: Buffer.from('hello').toString('base64') },
      415,
      /not a PDF/,
    ],
    ['an EPUB that is not base64', { title: 'x', format: 'epub', content: 'PK!!' }, 400, /base64 for epub/],
    [
      'an EPUB that is not a zip',
      { title: 'x', format: 'epub', content: Buffer.from('hello').toString('base64') },
      415,
      /not an EPUB/,
    ],
    [
      'a DOCX that is not a zip',
      { title: 'x', format: 'docx', content: Buffer.from('hello').toString('base64') },
      415,
      /not a Word document/,
    ],
  ])('rejects JSON with %s', async (_, body, status, message) => {
    const res = await call(userB, 'POST', '/books', body);
    expect(res.status).toBe(status);
    expect(res.body.statusCode).toBe(status);
    expect(JSON.stringify(res.body.message)).toMatch(message);
    expect((await call(userB, 'GET', '/books')).body.items).toEqual([]);
  });

  it('rejects uploads of unknown type and over 20 MB, storing nothing', async () => {
    const unknown = await call(userB, 'POST', '/books', form(new Blob(['hello']), 'book.mobi'));
    expect(unknown.status).toBe(415);
    expect(unknown.body.message).toMatch(/cannot tell the format/);
    const notZip = await call(userB, 'POST', '/books', form(new Blob(['hello']), 'book.epub'));
    expect(notZip).toMatchObject({ status: 415, body: { code: 'book_unsupported_type' } });
    const huge = await call(
      userB,
      'POST',
      '/books',
      form(new Blob([Buffer.alloc(MAX_BOOK_BYTES + 1, 'a')]), 'huge.txt'),
    );
    expect(huge.status).toBe(413);
    const both = await call(userB, 'POST', '/books', form(new Blob(['hello']), 'a.txt', { content: 'also this' }));
    expect(both.status).toBe(400);
    expect((await call(userB, 'GET', '/books')).body.items).toEqual([]);
  });

  it('validates search parameters', async () => {
    const created = await upload(userA, {
      title: 'S',
      format: 'text',
      content: 'A short text about owls.',
    });
    const url = `/books/${created.body.id}/search`;
    expect((await call(userA, 'GET', url)).status).toBe(400);
    expect((await call(userA, 'GET', `${url}?q=`)).status).toBe(400);
    expect((await call(userA, 'GET', `${url}?q=${'a'.repeat(501)}`)).status).toBe(400);
    expect((await call(userA, 'GET', `${url}?q=owls&k=21`)).status).toBe(400);
    expect((await call(userA, 'GET', `${url}?q=owls&k=two`)).status).toBe(400);
    expect(await call(userA, 'GET', `${url}?q=owls&k=20`)).toMatchObject({
      status: 200,
      body: { items: [{ text: 'A short text about owls.' }] },
    });
  });

  it('documents the routes in OpenAPI, JSON and multipart alike', () => {
    const doc = SwaggerModule.createDocument(app, new DocumentBuilder().build());
    const bookPaths = Object.keys(doc.paths).filter((p) => p.startsWith('/v1/books'));
    expect(bookPaths.sort()).toEqual(['/v1/books', '/v1/books/{id}', '/v1/books/{id}/events', '/v1/books/{id}/search']);
    expect(Object.keys(doc.paths['/v1/books'].post!.requestBody as object)).toContain('content');
    const content = (doc.paths['/v1/books'].post!.requestBody as { content: Record<string, unknown> }).content;
    expect(Object.keys(content).sort()).toEqual(['application/json', 'multipart/form-data']);
    expect(doc.components!.schemas).toHaveProperty('BookDto');
    expect(doc.components!.schemas).toHaveProperty('UploadBookDto');
  });

  it('answers 202 at once and streams the progress of the ingestion until ready', async () => {
    const userC = `c-${randomUUID()}`;
    const content = Array.from({ length: 40 }, (_, i) => `Chapter ${i + 1}\n\n${'The owl flew. '.repeat(800)}`).join(
      '\n\n',
    );
    const accepted = await call(userC, 'POST', '/books', { title: 'Owls', format: 'text', content });
    expect(accepted.status).toBe(202);
    const id = accepted.body.id;
    // a conversation about a book still ingesting is a clear 409
    const early = await call(userC, 'POST', '/conversations', { bookId: id });
    expect(early).toMatchObject({ status: 409, body: { code: 'book_not_ready' } });

    const res = await fetch(`${base}/books/${id}/events?access_token=${await mintToken(userC, SECRET)}`);
    expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
    const frames = (async () => {
      let text = '';
      for await (const chunk of res.body!) text += Buffer.from(chunk).toString();
      return text;
    })();
    await app.get(BookIngest, { strict: false }).process(id);
    const events = [...(await frames).matchAll(/event: (\w+)\ndata: (.*)\n/g)].map((m) => ({
      event: m[1],
      book: JSON.parse(m[2]),
    }));
    expect(events[0]).toMatchObject({ event: 'progress', book: { status: 'ingesting' } });
    expect(events.at(-1)).toMatchObject({ event: 'ready', book: { status: 'ready', chunkCount: expect.any(Number) } });
    expect(events.filter((e) => e.event === 'ready')).toHaveLength(1);
    expect((await call(userC, 'POST', '/conversations', { bookId: id })).status).toBe(201);
  });

  it('fails a decompression bomb with its problem code, keeping nothing but the row that says why', async () => {
    const userD = `d-${randomUUID()}`;
    const accepted = await call(userD, 'POST', '/books', form(new Blob([bomb]), 'bomb.pdf'));
    expect(accepted.status).toBe(202);
    const id = accepted.body.id;
    await expect(app.get(BookIngest, { strict: false }).process(id)).rejects.toMatchObject({
      code: 'book_too_large_when_expanded',
    });
    const shown = await call(userD, 'GET', `/books/${id}`);
    expect(shown.body).toMatchObject({
      status: 'failed',
      error: { code: 'book_too_large_when_expanded', message: expect.stringMatching(/expands to more than/) },
      progress: { phase: 'failed' },
    });
    for (const table of ['book_uploads', 'book_chunks', 'book_terms'])
      expect((await db.pool.query(`SELECT 1 FROM ${table} WHERE book_id = $1`, [id])).rowCount).toBe(0);
    expect((await call(userD, 'GET', `/books/${id}/search?q=boom`)).body).toMatchObject({ code: 'book_not_ready' });
    expect((await call(userD, 'DELETE', `/books/${id}`)).status).toBe(204);
  });

  it('allows two ingestions in flight per user, then 429 with Retry-After', async () => {
    const userE = `e-${randomUUID()}`;
    const post = () => call(userE, 'POST', '/books', { title: 'Q', format: 'text', content: 'Some words.' });
    expect((await post()).status).toBe(202);
    expect((await post()).status).toBe(202);
    const res = await fetch(`${base}/books`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await mintToken(userE, SECRET)}`, 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'Q', format: 'text', content: 'Some words.' }),
    });
    expect(res.status).toBe(429);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await res.json()).toMatchObject({ code: 'book_ingest_busy' });
    // once one is done, a slot is free again
    const [first] = (await call(userE, 'GET', '/books')).body.items;
    await app.get(BookIngest, { strict: false }).process(first.id);
    expect((await post()).status).toBe(202);
  });

  it('requires a bearer token', async () => {
    const res = await fetch(`${base}/books`);
    expect(res.status).toBe(401);
  });
});
