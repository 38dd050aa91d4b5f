import { ChatResult, LlmDocumentBlock, LlmMessage } from '../llm/llm.types';
import {
  bookDocuments,
  citedFromDocuments,
  CHECKPOINT_EVERY_DOCUMENTS,
  wholeBookLimit,
  WholeBookPassage,
  WholeBookText,
  withBooks,
} from './whole-book';

const passage = (chapterIndex: number, n: number): WholeBookPassage => ({
  chunkId: `c${chapterIndex}-${n}`,
  chapter: `Chapter ${chapterIndex}`,
  chapterIndex,
  section: null,
  page: null,
  text: `Passage ${n} of chapter ${chapterIndex}.`,
});

const book = (bookId: string, chapters: number, perChapter = 2): WholeBookText => ({
  bookId,
  title: `Book ${bookId}`,
  passages: Array.from({ length: chapters }, (_, c) =>
    Array.from({ length: perChapter }, (_, n) => passage(c + 1, n)),
  ).flat(),
});

const answer = (...blocks: ChatResult['content']): ChatResult => ({
  content: blocks,
  stopReason: 'end_turn',
  model: 'm',
  usage: { inputTokens: 1, outputTokens: 1, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 },
});

describe('bookDocuments', () => {
  it('makes one document per chapter, titled with the book, one text per passage, in book order', () => {
    const { documents, sources } = bookDocuments([book('a', 3)]);
    expect(documents.map((d) => [d.title, d.context, d.passages])).toEqual([
      ['Book a', 'Chapter 1 (chapter 1 of the book)', ['Passage 0 of chapter 1.', 'Passage 1 of chapter 1.']],
      ['Book a', 'Chapter 2 (chapter 2 of the book)', ['Passage 0 of chapter 2.', 'Passage 1 of chapter 2.']],
      ['Book a', 'Chapter 3 (chapter 3 of the book)', ['Passage 0 of chapter 3.', 'Passage 1 of chapter 3.']],
    ]);
    expect(sources.map((s) => s.passages.map((p) => p.chunkId))).toEqual([
      ['c1-0', 'c1-1'],
      ['c2-0', 'c2-1'],
      ['c3-0', 'c3-1'],
    ]);
  });

  it('puts a breakpoint at the end of the books, and one at the last checkpoint before it', () => {
    const few = bookDocuments([book('a', 5)]).documents;
    expect(few.map((d) => !!d.cacheBreakpoint)).toEqual([false, false, false, false, true]);

    const many = bookDocuments([book('a', 40)], '1h').documents;
    const marked = many.flatMap((d, i) => (d.cacheBreakpoint ? [i] : []));
    expect(marked).toEqual([2 * CHECKPOINT_EVERY_DOCUMENTS - 1, 39]);
    expect(many[39].cacheTtl).toBe('1h');
  });

  it('gives every reader at a position the same documents, and a reader further on the same ones first', () => {
    const at5 = bookDocuments([book('a', 5)]).documents;
    const at6 = bookDocuments([book('a', 6)]).documents;
    const strip = (d: LlmDocumentBlock) => ({ ...d, cacheBreakpoint: undefined, cacheTtl: undefined });
    expect(at6.slice(0, 5).map(strip)).toEqual(at5.map(strip));
  });

  it('keeps several books apart: one document per chapter of each, in the order of the conversation', () => {
    const { documents } = bookDocuments([book('a', 2), book('b', 1)]);
    expect(documents.map((d) => d.title)).toEqual(['Book a', 'Book a', 'Book b']);
  });
});

describe('withBooks', () => {
  it('puts the books first, then the reader note, then the first message of the history', () => {
    const history: LlmMessage[] = [
      { role: 'user', content: [{ type: 'text', text: 'first question' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'first answer' }] },
      { role: 'user', content: [{ type: 'text', text: 'second question' }] },
    ];
    const { documents } = bookDocuments([book('a', 1)]);
    const messages = withBooks(history, documents, 'read up to 1');
    expect(messages).toHaveLength(3);
    expect(messages[0].content.map((b) => b.type)).toEqual(['document', 'text', 'text']);
    expect(messages.slice(1)).toEqual(history.slice(1));
  });
});

describe('citedFromDocuments', () => {
  const { sources } = bookDocuments([book('a', 2)]);

  it('turns content block citations into the passages cited, numbered after the text that cites them', () => {
    const result = answer(
      { type: 'text', text: 'It begins ' },
      {
        type: 'text',
        text: 'with passage one.',
        citations: [{ type: 'block', documentIndex: 1, startBlock: 0, endBlock: 2, citedText: '…' }],
      },
      { type: 'text', text: ' And again ' },
      {
        type: 'text',
        text: 'here.',
        citations: [{ type: 'block', documentIndex: 1, startBlock: 1, endBlock: 2, citedText: '…' }],
      },
    );
    const { content, citations, stray } = citedFromDocuments(result, sources, { severalBooks: false });
    expect(content).toBe('It begins with passage one. [1][2] And again here. [2]');
    expect(citations).toEqual([
      {
        chunkId: 'c2-0',
        chapter: 'Chapter 2',
        chapterIndex: 2,
        section: null,
        page: null,
        score: 1,
        quoted: true, // the passage's text is joined from the book when the log is read
      },
      expect.objectContaining({ chunkId: 'c2-1', quoted: true }),
    ]);
    expect(stray).toEqual([]);
  });

  it('drops a citation pointing outside what was sent, and says so', () => {
    const result = answer({
      type: 'text',
      text: 'Made up.',
      citations: [
        { type: 'block', documentIndex: 7, startBlock: 0, endBlock: 1, citedText: 'x' },
        { type: 'block', documentIndex: 0, startBlock: 1, endBlock: 5, citedText: 'x' },
      ],
    });
    const { content, citations, stray } = citedFromDocuments(result, sources, { severalBooks: false });
    expect(content).toBe('Made up.');
    expect(citations).toEqual([]);
    expect(stray).toHaveLength(2);
  });

  it('names the book of each passage when the conversation has several', () => {
    const two = bookDocuments([book('a', 1), book('b', 1)]).sources;
    const result = answer({
      type: 'text',
      text: 'B says.',
      citations: [{ type: 'block', documentIndex: 1, startBlock: 0, endBlock: 1, citedText: 'x' }],
    });
    expect(citedFromDocuments(result, two, { severalBooks: true }).citations[0]).toMatchObject({
      bookId: 'b',
      chunkId: 'c1-0',
    });
  });
});

describe('wholeBookLimit', () => {
  it('leaves the history, the answer and the prompts their room, and keeps to WHOLE_BOOK_MAX_TOKENS', () => {
    const room = { maxTokens: 120_000, historyBudgetTokens: 60_000, answerTokens: 1_024 };
    expect(wholeBookLimit(room)).toBe(120_000);
    expect(wholeBookLimit({ ...room, maxTokens: 190_000 })).toBe(200_000 - 60_000 - 1_024 - 2_000);
    expect(wholeBookLimit({ ...room, historyBudgetTokens: 150_000 })).toBe(200_000 - 150_000 - 1_024 - 2_000);
  });
});
