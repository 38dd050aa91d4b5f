import { Citation } from '@parley/conversation';
import { ChatResult, LlmDocumentBlock, LlmMessage, LlmTextBlock } from '../llm/llm.types';

/**
 * Whole-book retrieval, as pure functions: the book up to the reading position as documents the
 * model cites (one per chapter, one text block per passage), the request around them, and the
 * model's citations turned back into passages. No I/O: the worker reads the books and calls.
 */

/** A passage as the books library reads it for whole-book retrieval. */
export interface WholeBookPassage {
  chunkId: string;
  chapter: string;
  chapterIndex: number;
  section: string | null;
  page: number | null;
  text: string;
}

/** A book up to the reading position: its passages in book order. */
export interface WholeBookText {
  bookId: string;
  title: string;
  passages: WholeBookPassage[];
}

/** The request's documents, and for each the book and passages its text blocks are. */
export interface BookDocuments {
  documents: LlmDocumentBlock[];
  sources: Array<{ bookId: string; passages: WholeBookPassage[] }>;
}

/** The context window of the Claude models Parley runs. */
export const MODEL_CONTEXT_TOKENS = 200_000;
/** What the system prompt, the reader's note and the question take besides the book and the history. */
const PROMPT_RESERVE_TOKENS = 2_000;
/**
 * A cache breakpoint at every so many chapters too: the API looks for a cached prefix at most
 * 20 blocks before a breakpoint, so a reader jumping further ahead than that still reads the
 * chapters before the last such checkpoint from the cache.
 */
export const CHECKPOINT_EVERY_DOCUMENTS = 16;

/**
 * The largest book (tokens, up to the reading position) a turn sends whole: what the model's
 * window leaves beside the history budget, the answer and the prompts, and at most
 * WHOLE_BOOK_MAX_TOKENS (in `whole-book` as in `auto`: the operator's bound on what one call may
 * carry, whatever a reader's policy asks).
 */
export function wholeBookLimit({
  maxTokens,
  historyBudgetTokens,
  answerTokens,
}: {
  maxTokens: number;
  historyBudgetTokens: number;
  answerTokens: number;
}): number {
  const window = MODEL_CONTEXT_TOKENS - historyBudgetTokens - answerTokens - PROMPT_RESERVE_TOKENS;
  return Math.min(maxTokens, window);
}

/**
 * One document per chapter of each book, in book order, titled with the book's title, its
 * passages as its text blocks. Breakpoints: the end of the books (the prefix every reader of
 * these books at this position shares) and the last checkpoint before it, so moving the reading
 * position forward keeps the earlier chapters a cached prefix. The request keeps within the
 * API's 4 breakpoints with the history's two.
 */
export function bookDocuments(books: WholeBookText[], cacheTtl?: '5m' | '1h'): BookDocuments {
  const sources: BookDocuments['sources'] = [];
  const documents: LlmDocumentBlock[] = [];
  for (const book of books) {
    for (const chapter of chaptersOf(book.passages)) {
      sources.push({ bookId: book.bookId, passages: chapter });
      documents.push({
        type: 'document',
        title: book.title,
        context: chapterContext(chapter[0]),
        passages: chapter.map((p) => p.text),
      });
    }
  }
  const last = documents.length - 1;
  const checkpoint = Math.floor(last / CHECKPOINT_EVERY_DOCUMENTS) * CHECKPOINT_EVERY_DOCUMENTS - 1;
  const cached = (i: number) =>
    (documents[i] = { ...documents[i], cacheBreakpoint: true, ...(cacheTtl ? { cacheTtl } : {}) });
  if (checkpoint >= 0) cached(checkpoint);
  if (last >= 0) cached(last);
  return { documents, sources };
}

/** A book's passages cut into its chapters (runs of the same chapter index, in book order). */
function chaptersOf(passages: WholeBookPassage[]): WholeBookPassage[][] {
  const chapters: WholeBookPassage[][] = [];
  for (const p of passages) {
    const current = chapters[chapters.length - 1];
    if (current && current[0].chapterIndex === p.chapterIndex) current.push(p);
    else chapters.push([p]);
  }
  return chapters;
}

const chapterContext = (p: WholeBookPassage): string => `${p.chapter} (chapter ${p.chapterIndex} of the book)`;

/**
 * The request's messages: the books' documents first, then what differs per reader (how far
 * they read, their instructions), then the history and the question, all in the first user
 * message's place; so the prompt up to the books is the same for every reader of these books at
 * this position. `prefixEnd` is unchanged: no message is added.
 */
export function withBooks(history: LlmMessage[], documents: LlmDocumentBlock[], readerNote: string): LlmMessage[] {
  const [first, ...rest] = history;
  if (!first || first.role !== 'user') throw new Error('a history opens with the user');
  return [{ role: 'user', content: [...documents, { type: 'text', text: readerNote }, ...first.content] }, ...rest];
}

/** What the reader's part of the request says: how far they read, and their instructions. */
export function readerNote(readingPosition: number | null, instructions: string | undefined): string {
  const scope =
    readingPosition === null
      ? 'The reader may discuss the whole book: the documents hold all of it.'
      : `The reader has read up to and including chapter ${readingPosition}: the documents hold the book up to there and no further.`;
  return instructions
    ? `${scope}\n\nThe reader's instructions for this conversation:\n<instructions>\n${instructions}\n</instructions>`
    : scope;
}

/** A citation the model made that points outside the documents sent: dropped, told to the caller to log. */
export interface StrayCitation {
  documentIndex: number;
  where: string;
}

/**
 * The answer's text and the passages it cites, from the provider's citations: each cited passage
 * once, numbered in the order first cited, its number `[n]` written after the text citing it (as
 * search answers cite), with the text the model quoted. A citation outside the documents sent
 * is dropped and returned as stray, never invented.
 */
export function citedFromDocuments(
  result: ChatResult,
  sources: BookDocuments['sources'],
  { severalBooks }: { severalBooks: boolean },
): { content: string; citations: Citation[]; stray: StrayCitation[] } {
  const citations: Citation[] = [];
  const numbers = new Map<string, number>();
  const stray: StrayCitation[] = [];
  let content = '';
  const texts = result.content.filter((b): b is LlmTextBlock => b.type === 'text');
  for (const block of texts) {
    const cited: number[] = [];
    for (const c of block.citations ?? []) {
      const source = sources[c.documentIndex];
      const passages =
        c.type === 'block' &&
        source &&
        c.startBlock >= 0 &&
        c.endBlock > c.startBlock &&
        c.endBlock <= source.passages.length
          ? source.passages.slice(c.startBlock, c.endBlock)
          : null;
      if (!passages) {
        const where = c.type === 'block' ? `blocks ${c.startBlock}-${c.endBlock}` : `chars ${c.startChar}-${c.endChar}`;
        stray.push({ documentIndex: c.documentIndex, where });
        continue;
      }
      for (const p of passages) {
        let n = numbers.get(p.chunkId);
        if (n === undefined) {
          n = citations.length + 1;
          numbers.set(p.chunkId, n);
          citations.push({
            chunkId: p.chunkId,
            ...(severalBooks ? { bookId: source.bookId } : {}),
            chapter: p.chapter,
            chapterIndex: p.chapterIndex,
            section: p.section,
            page: p.page,
            score: 1,
            quoted: true, // the whole passage: its text is joined from the book when the log is read
          });
        }
        if (!cited.includes(n)) cited.push(n);
      }
    }
    const marks = cited.map((n) => `[${n}]`).join('');
    content += cited.length ? `${block.text.replace(/\s+$/, '')} ${marks}${trailingSpace(block.text)}` : block.text;
  }
  return { content, citations, stray };
}

const trailingSpace = (text: string): string => /\s+$/.exec(text)?.[0] ?? '';
