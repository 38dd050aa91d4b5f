import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '@parley/platform';
import type { ToolContext } from '@parley/agent';
import {
  Book,
  BookNotFoundError,
  BookRejectedError,
  BookIngest,
  BookQueries,
  BookSearch,
  BooksRepository,
  BookShelf,
  readerOf,
  MAX_BOOK_BYTES,
  SearchBookTool,
  ListChaptersTool,
  ReadPassageTool,
  PassagesRepository,
} from '@parley/books';
import { minimalPdf } from '../support/minimal-pdf';
import { createTestDatabase, TestDatabase } from '../support/test-database';

const bookPath = (file: string) => path.join(projectRoot(), 'data/books', file);
const sampleBook = (file: string) => readFileSync(bookPath(file));
const squash = (s: string) => s.replace(/\s+/g, ' ').toLowerCase();

describe('books: ingest, queries, search', () => {
  let db: TestDatabase;
  let repo: BooksRepository;
  let ingest: BookIngest;
  let books: BookQueries;
  let bookSearch: BookSearch;
  let alice: Book;
  const reader = `reader-${randomUUID()}`;

  const count = async (table: 'books' | 'book_chunks' | 'book_terms', bookId?: string) => {
    const where = bookId ? (table === 'books' ? 'WHERE id = $1' : 'WHERE book_id = $1') : '';
    const { rows } = await db.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ${table} ${where}`,
      bookId ? [bookId] : [],
    );
    return rows[0].n;
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    repo = new BooksRepository(db.pool);
    ingest = new BookIngest(repo);
    books = new BookQueries(new BookShelf(db.pool));
    bookSearch = new BookSearch(new PassagesRepository(db.pool), new BookShelf(db.pool));
    alice = await ingest.ingest(reader, {
      title: "Alice's Adventures in Wonderland",
      author: 'Lewis Carroll',
      format: 'text',
      content: sampleBook('alice.txt'),
    });
  });
  afterAll(() => db.drop());

  describe('ingest', () => {
    it('stores the book with its chapters and chunks, in one go', async () => {
      expect(alice).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        title: "Alice's Adventures in Wonderland",
        author: 'Lewis Carroll',
        format: 'text',
        visibility: 'private',
        status: 'ready',
        chapters: expect.any(Array),
        chunkCount: expect.any(Number),
        progress: {
          phase: 'done',
          bytesTotal: 167_518,
          chunksWritten: alice.chunkCount,
          chunksTotal: alice.chunkCount,
        },
        createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      });
      expect(alice.chapters).toHaveLength(12);
      expect(alice.chapters[5]).toEqual({ index: 6, title: 'CHAPTER VI. Pig and Pepper' });
      expect(alice.chunkCount).toBeGreaterThan(120);
      expect(await count('book_chunks', alice.id)).toBe(alice.chunkCount);
      expect(await count('book_terms', alice.id)).toBeGreaterThan(1000);
      const { rows } = await db.pool.query(
        'SELECT ordinal, chapter_index, chapter, page FROM book_chunks WHERE book_id = $1 ORDER BY ordinal',
        [alice.id],
      );
      expect(rows.map((r) => r.ordinal)).toEqual(rows.map((_, i) => i));
      expect(rows[0]).toEqual({ ordinal: 0, chapter_index: 1, chapter: 'CHAPTER I. Down the Rabbit-Hole', page: null });
      expect(rows[rows.length - 1].chapter_index).toBe(12);
    });

    it('lists, shows and deletes only the owner’s books; a foreign book is not found', async () => {
      const other = `other-${randomUUID()}`;
      const mine = await ingest.ingest(other, {
        title: 'Mine',
        format: 'markdown',
        content: '# One\n\nA tale of a hat.\n\n# Two\n\nThe end.',
      });
      expect(mine.chapters).toEqual([
        { index: 1, title: 'One' },
        { index: 2, title: 'Two' },
      ]);
      expect((await books.list(readerOf(other), { limit: 100 })).items.map((b) => b.id)).toEqual([mine.id]);
      expect((await books.list(readerOf(reader), { limit: 100 })).items.map((b) => b.id)).toContain(alice.id);
      expect((await books.list(readerOf(reader), { limit: 100 })).items.map((b) => b.id)).not.toContain(mine.id);
      expect(await books.get(readerOf(other), mine.id)).toEqual(mine);
      await expect(books.get(readerOf(other), 'not-a-uuid')).rejects.toBeInstanceOf(BookNotFoundError);
      await expect(books.get(readerOf(reader), mine.id)).rejects.toBeInstanceOf(BookNotFoundError);
      await expect(bookSearch.search(readerOf(reader), mine.id, 'hat')).rejects.toBeInstanceOf(BookNotFoundError);
      expect(await repo.delete(reader, mine.id)).toBe(false);
      expect((await bookSearch.search(readerOf(other), mine.id, 'hat')).items).toHaveLength(1);
      expect(await count('book_chunks', mine.id)).toBe(2);
    });

    it('deletes a book with its chunks and vocabulary', async () => {
      const owner = `deleter-${randomUUID()}`;
      const book = await ingest.ingest(owner, {
        title: 'Frankenstein',
        format: 'text',
        content: sampleBook('frankenstein.txt'),
      });
      expect(book.chapters).toHaveLength(28);
      expect(await count('book_chunks', book.id)).toBeGreaterThan(300);
      expect(await repo.delete(owner, book.id)).toBe(true);
      expect(await count('books', book.id)).toBe(0);
      expect(await count('book_chunks', book.id)).toBe(0);
      expect(await count('book_terms', book.id)).toBe(0);
      await expect(books.get(readerOf(owner), book.id)).rejects.toBeInstanceOf(BookNotFoundError);
      expect(await repo.delete(owner, book.id)).toBe(false);
    });

    it.each([
      ['empty content', { format: 'text', content: '' }, 400],
      ['binary content', { format: 'text', content: Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x00, 0x00, 0xff]) }, 415],
      ['a file over 20 MB', { format: 'text', content: Buffer.alloc(MAX_BOOK_BYTES + 1, 'x') }, 413],
      ['a PDF that is not one', { format: 'pdf', content: Buffer.from('hello') }, 415],
      ['a book without text', { format: 'markdown', content: '# Title\n\n## One\n\n## Two\n' }, 400],
      ['an empty title', { title: ' ', format: 'text', content: 'Some text.' }, 400],
    ] as const)('rejects %s and leaves nothing behind', async (_, input, status) => {
      const owner = `rejected-${randomUUID()}`;
      const before = [await count('books'), await count('book_chunks'), await count('book_terms')];
      const error = await ingest.ingest(owner, { title: 'Bad', ...input }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(BookRejectedError);
      expect((error as BookRejectedError).status).toBe(status);
      expect([await count('books'), await count('book_chunks'), await count('book_terms')]).toEqual(before);
      expect((await books.list(readerOf(owner), { limit: 100 })).items).toEqual([]);
    });

    it('keeps the page of each chunk of a PDF', async () => {
      const pdf = minimalPdf([
        ['Chapter 1', '', 'The lighthouse keeper counted the gulls every morning.'],
        ['Chapter 2', '', 'A storm came and the lamp went out over the harbour.'],
      ]);
      const book = await ingest.ingest(reader, { title: 'Lamp', format: 'pdf', content: pdf });
      expect(book.chapters.map((c) => c.title)).toEqual(['Chapter 1', 'Chapter 2']);
      const { items } = await bookSearch.search(readerOf(reader), book.id, 'lamp storm harbour');
      expect(items[0]).toMatchObject({ chapter: 'Chapter 2', chapterIndex: 2, page: 2 });
    });
  });

  describe('search', () => {
    it('ranks the passage about the Cheshire Cat’s grin in chapter VI first', async () => {
      const { items } = await bookSearch.search(readerOf(reader), alice.id, 'Cheshire Cat grin');
      expect(items).toHaveLength(5);
      expect(items[0].chapter).toBe('CHAPTER VI. Pig and Pepper');
      expect(squash(items[0].text)).toContain('cheshire cat');
      expect(items.map((i) => i.score)).toEqual([...items.map((i) => i.score)].sort((a, b) => b - a));
      for (const i of items) {
        expect(i.score).toBeGreaterThan(0);
        expect(i.score).toBeLessThanOrEqual(1);
        expect(i).toEqual({
          chunkId: expect.any(String),
          chapter: expect.any(String),
          chapterIndex: expect.any(Number),
          section: null,
          page: null,
          text: expect.any(String),
          score: expect.any(Number),
        });
      }
    });

    it('answers a reader’s question in their own words', async () => {
      const { items } = await bookSearch.search(
        readerOf(reader),
        alice.id,
        'What did they use as balls and mallets in the Queen’s game?',
      );
      expect(items[0].chapter).toBe("CHAPTER VIII. The Queen's Croquet-Ground");
      expect(squash(items[0].text)).toContain('the balls were live hedgehogs');
    });

    it('finds a misspelt name by trigram similarity', async () => {
      const { items } = await bookSearch.search(readerOf(reader), alice.id, 'Cheshre');
      expect(items.length).toBeGreaterThan(0);
      expect(items.every((i) => squash(i.text).includes('cheshire'))).toBe(true);
      const typo = await bookSearch.search(readerOf(reader), alice.id, 'the Cheshre Cat grinning');
      expect(typo.items.slice(0, 3).some((i) => i.chapterIndex === 6 && squash(i.text).includes('cheshire'))).toBe(
        true,
      );
    });

    it('never returns passages from chapters after maxChapter', async () => {
      const everywhere = await bookSearch.search(readerOf(reader), alice.id, 'the Queen playing croquet', { k: 20 });
      expect(everywhere.items.some((i) => i.chapterIndex > 7)).toBe(true);
      const upTo7 = await bookSearch.search(readerOf(reader), alice.id, 'the Queen playing croquet', {
        k: 20,
        maxChapter: 7,
      });
      expect(upTo7.items.length).toBeGreaterThan(0);
      expect(upTo7.items.every((i) => i.chapterIndex <= 7)).toBe(true);
      const upTo1 = await bookSearch.search(readerOf(reader), alice.id, 'Cheshire Cat grin', { maxChapter: 1 });
      expect(upTo1.items.every((i) => i.chapterIndex === 1)).toBe(true);
      expect(upTo1.items.some((i) => squash(i.text).includes('cheshire'))).toBe(false);
    });

    it('reads "up to chapter N" as the book numbers its chapters, after a preface', async () => {
      const para = (s: string) => `${s} `.repeat(8).trim();
      const book = await ingest.ingest(reader, {
        title: 'The Keeper',
        format: 'text',
        content: [
          'PREFACE',
          para('The author thanks the harbour master for the charts of the coast.'),
          'Chapter 1',
          para('The lighthouse keeper counted the gulls on the rocks every morning.'),
          'Chapter 2',
          para('A storm came in the night and the lamp went out over the water.'),
        ].join('\n\n'),
      });
      expect(book.chapters).toEqual([
        { index: 0, title: 'PREFACE' },
        { index: 1, title: 'Chapter 1' },
        { index: 2, title: 'Chapter 2' },
      ]);
      const upTo1 = await bookSearch.search(readerOf(reader), book.id, 'lighthouse keeper gulls storm lamp', {
        maxChapter: 1,
      });
      expect(upTo1.items.map((i) => i.chapter)).toContain('Chapter 1');
      expect(upTo1.items.map((i) => i.chapter)).not.toContain('Chapter 2');
    });

    it('bounds k to 1..20 and answers nothing for a question without words', async () => {
      expect((await bookSearch.search(readerOf(reader), alice.id, 'Alice', { k: 50 })).items).toHaveLength(20);
      expect((await bookSearch.search(readerOf(reader), alice.id, 'Alice', { k: 0 })).items).toHaveLength(1);
      expect((await bookSearch.search(readerOf(reader), alice.id, 'Alice')).items).toHaveLength(5);
      expect((await bookSearch.search(readerOf(reader), alice.id, '?!… --')).items).toEqual([]);
      expect((await bookSearch.search(readerOf(reader), alice.id, 'the of and')).items).toEqual([]);
      expect((await bookSearch.search(readerOf(reader), alice.id, 'xylophonist quantum')).items).toEqual([]);
    });

    it('keeps each book’s search to its own passages', async () => {
      const pp = await ingest.ingest(reader, {
        title: 'Pride and Prejudice',
        format: 'text',
        content: sampleBook('pride_and_prejudice.txt'),
      });
      const { items } = await bookSearch.search(readerOf(reader), pp.id, 'Cheshire Cat grin Mr. Darcy');
      const ids = new Set(
        (await db.pool.query('SELECT id FROM book_chunks WHERE book_id = $1', [pp.id])).rows.map((r) => r.id),
      );
      expect(items.length).toBe(5);
      expect(items.every((i) => ids.has(i.chunkId))).toBe(true);
    });
  });

  describe(SearchBookTool.name, () => {
    let tool: SearchBookTool;
    const ctx = (over: Partial<ToolContext> = {}): ToolContext => {
      const bookId = over.bookId === undefined ? alice.id : over.bookId;
      return {
        userId: reader,
        catalogue: null,
        conversationId: randomUUID(),
        readingPosition: null,
        ...over,
        bookId,
        bookIds: over.bookIds ?? (bookId ? [bookId] : []),
      };
    };

    beforeAll(() => {
      tool = new SearchBookTool(bookSearch, books);
    });

    it('numbers the passages [1]… and gives the citations in the same order', async () => {
      const out = await tool.run({ query: 'Cheshire Cat grin', k: 3 }, ctx());
      expect(out.isError).toBeFalsy();
      expect(out.chunks).toHaveLength(3);
      const blocks = out.content.split(/\n\n(?=\[\d+\] )/).slice(1);
      expect(blocks).toHaveLength(3);
      blocks.forEach((block, i) => {
        const citation = out.chunks![i];
        expect(block.startsWith(`[${i + 1}] ${citation.chapter}\n`)).toBe(true);
        expect(citation).toEqual({
          chunkId: expect.any(String),
          chapter: expect.any(String),
          chapterIndex: expect.any(Number),
          section: null,
          page: null,
          score: expect.any(Number),
        });
      });
      expect(out.chunks![0].chapter).toBe('CHAPTER VI. Pig and Pepper');
      const { rows } = await db.pool.query('SELECT text FROM book_chunks WHERE id = $1', [out.chunks![0].chunkId]);
      expect(blocks[0]).toContain(rows[0].text);
    });

    it('names each passage by its id in the parts the log keeps, which join into the content the model reads', async () => {
      const out = await tool.run({ query: 'Cheshire Cat grin', k: 3 }, ctx());
      const named = out.contentParts!.filter((p): p is { passage: string } => typeof p !== 'string');
      expect(named.map((p) => p.passage)).toEqual(out.chunks!.map((c) => c.chunkId));
      const { rows } = await db.pool.query<{ id: string; text: string }>(
        'SELECT id, text FROM book_chunks WHERE id = ANY($1::uuid[])',
        [named.map((p) => p.passage)],
      );
      const texts = new Map(rows.map((r) => [r.id, r.text]));
      const words = out.contentParts!.filter((p) => typeof p === 'string').join('');
      for (const text of texts.values()) expect(words).not.toContain(text);
      expect(out.contentParts!.map((p) => (typeof p === 'string' ? p : texts.get(p.passage))).join('')).toBe(
        out.content,
      );
    });

    it("continues the turn's numbering from citationStart", async () => {
      const first = await tool.run({ query: 'Cheshire Cat grin', k: 2 }, ctx());
      const later = await tool.run({ query: 'Cheshire Cat grin', k: 2 }, ctx({ citationStart: 4 }));
      expect(later.chunks).toEqual(first.chunks);
      expect(later.content.match(/^\[\d+\] /gm)).toEqual(['[4] ', '[5] ']);
      expect(first.content.match(/^\[\d+\] /gm)).toEqual(['[1] ', '[2] ']);
    });

    it('leaves out the passages an earlier search of the turn returned (the HyDE search), still k of them', async () => {
      const first = await tool.run({ query: 'Cheshire Cat grin', k: 3 }, ctx());
      const excluded = first.chunks!.slice(0, 2).map((c) => c.chunkId);
      const out = await tool.run({ query: 'Cheshire Cat grin', k: 3 }, ctx({ excludeChunkIds: excluded }));
      expect(out.chunks).toHaveLength(3);
      expect(out.chunks!.map((c) => c.chunkId)).not.toContain(excluded[0]);
      expect(out.chunks!.map((c) => c.chunkId)).not.toContain(excluded[1]);
      expect(out.chunks![0].chunkId).toBe(first.chunks![2].chunkId);
    });

    it('searches only up to the reading position, and says so', async () => {
      const everywhere = await tool.run({ query: 'the Queen and the Mouse', k: 10 }, ctx());
      expect(everywhere.chunks!.some((c) => c.chapterIndex! > 2)).toBe(true);
      const out = await tool.run({ query: 'the Queen and the Mouse', k: 10 }, ctx({ readingPosition: 2 }));
      expect(out.content).toMatch(/chapters 1–2/);
      expect(out.chunks!.length).toBeGreaterThan(0);
      expect(out.chunks!.every((c) => c.chapterIndex! <= 2)).toBe(true);
      expect(out.content).not.toMatch(/CHAPTER (III|IV|V|VI|VII|VIII|IX|X|XI|XII)\./);
    });

    it('applies only to conversations with a book, and explains bad input', async () => {
      expect(tool.availableFor(ctx())).toBe(true);
      expect(tool.availableFor(ctx({ bookId: null }))).toBe(false);
      for (const input of [
        {},
        { query: '' },
        { query: 'x', k: 11 },
        { query: 'x', k: 1.5 },
        'Cheshire',
        null,
        { query: 'x', extra: 1 },
      ]) {
        const out = await tool.run(input, ctx());
        expect(out.isError).toBe(true);
        expect(out.content.length).toBeGreaterThan(5);
        expect(out.chunks).toBeUndefined();
      }
      expect(await tool.run({ query: 'cat' }, ctx({ bookId: null }))).toMatchObject({ isError: true });
      expect(await tool.run({ query: 'cat' }, ctx({ userId: 'someone-else' }))).toMatchObject({ isError: true });
      expect(await tool.run({ query: 'xylophonist' }, ctx())).toEqual({
        content: expect.stringMatching(/^No passages/),
        chunks: [],
      });
    });
  });

  describe('the reading tools (list_chapters, read_passage)', () => {
    let chapters: ListChaptersTool;
    let read: ReadPassageTool;
    const ctx = (over: Partial<ToolContext> = {}): ToolContext => ({
      userId: reader,
      catalogue: null,
      conversationId: randomUUID(),
      readingPosition: null,
      bookId: alice.id,
      bookIds: [alice.id],
      ...over,
    });
    const passagesOf = async (chapterIndex: number) =>
      (
        await db.pool.query<{ id: string; text: string }>(
          'SELECT id, text FROM book_chunks WHERE book_id = $1 AND chapter_index = $2 ORDER BY ordinal',
          [alice.id, chapterIndex],
        )
      ).rows;

    beforeAll(() => {
      const passages = new PassagesRepository(db.pool);
      chapters = new ListChaptersTool(books, passages);
      read = new ReadPassageTool(books, passages);
    });

    it('lists the chapters up to the reading position, with their passages, and names none past it', async () => {
      const all = await chapters.run({}, ctx());
      expect(all.isError).toBeFalsy();
      expect(all.content).toContain('- chapter 1: CHAPTER I. Down the Rabbit-Hole (');
      expect(all.content).toContain("CHAPTER XII. Alice's Evidence (13 passages)");
      const upTo2 = await chapters.run({}, ctx({ readingPosition: 2 }));
      expect(upTo2.content).toContain('CHAPTER II. The Pool of Tears');
      expect(upTo2.content).not.toContain('CHAPTER III');
      expect(upTo2.content).toMatch(/10 more chapters the reader has not reached/);
      const counted = Number(/CHAPTER II\. The Pool of Tears \((\d+) passages\)/.exec(upTo2.content)![1]);
      expect(counted).toBe((await passagesOf(2)).length);
    });

    it('reads a chapter from a passage on, numbered to cite and kept by reference, never past the reading position', async () => {
      const stored = await passagesOf(2);
      const out = await read.run({ chapter: 2, passage: 2, count: 2 }, ctx({ readingPosition: 2, citationStart: 7 }));
      expect(out.isError).toBeFalsy();
      expect(out.chunks!.map((c) => c.chunkId)).toEqual(stored.slice(1, 3).map((p) => p.id));
      expect(out.content).toContain(`[7] CHAPTER II. The Pool of Tears\n${stored[1].text}`);
      expect(out.content).toContain(`[8] CHAPTER II. The Pool of Tears\n${stored[2].text}`);
      expect(out.content.startsWith(`CHAPTER II. The Pool of Tears, passages 2–3 of ${stored.length}`)).toBe(true);
      expect(out.contentParts!.filter((p) => typeof p !== 'string')).toEqual(
        stored.slice(1, 3).map((p) => ({ passage: p.id })),
      );

      const past = await read.run({ chapter: 3 }, ctx({ readingPosition: 2 }));
      expect(past).toEqual({ isError: true, content: expect.stringContaining('has not reached chapter 3') });
      expect((await read.run({ chapter: 2, passage: 999 }, ctx())).isError).toBe(true);
      expect((await read.run({ chapter: 2, count: 6 }, ctx())).content).toMatch(/count must be/);
    });

    it('reads around a passage the turn numbered, and not into a chapter the reader has not reached', async () => {
      const two = await passagesOf(2);
      const three = await passagesOf(3);
      const last = two[two.length - 1];
      const numberedPassages = new Map([[4, last.id]]);
      const out = await read.run({ near: 4, count: 3 }, ctx({ numberedPassages }));
      expect(out.chunks!.map((c) => c.chunkId)).toEqual([two[two.length - 2].id, last.id, three[0].id]);
      const guarded = await read.run({ near: 4, count: 3 }, ctx({ numberedPassages, readingPosition: 2 }));
      expect(guarded.chunks!.map((c) => c.chunkId)).toEqual([two[two.length - 2].id, last.id]);
      expect((await read.run({ near: 5 }, ctx({ numberedPassages }))).content).toMatch(/there is no \[5\]/);
    });
  });
});
