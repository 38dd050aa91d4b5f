import { Injectable } from '@nestjs/common';
import { joinParts, type ToolContentPart, type ToolContext, type ToolOutput } from '@parley/agent';
import { citationOf, locate } from '../passage-citation';
import { ReadPassage } from '../search/passages.repository';
import { BOOK_PARAMETER, bookToRead, ReadingTool, readingScope } from './conversation-books';

export const READ_PASSAGE_MAX_COUNT = 5;
const DEFAULT_COUNT = 3;

type ReadInput =
  | { at: 'chapter'; chapter: number; passage: number; count: number; book?: string }
  | { at: 'near'; near: number; count: number; book?: string };

/**
 * `read_passage {chapter, passage?, count?, book?}` or `{near, count?}`: the book's text in place,
 * the way a person turns to a page: passages of a chapter from one on, or the passages around one
 * that this turn's search or reading numbered [n]. Never past the reader's position. The passages
 * come back numbered as search results are, so the answer cites them the same way, and the log
 * keeps them by reference (contentParts).
 */
@Injectable()
export class ReadPassageTool extends ReadingTool {
  readonly name = 'read_passage';
  readonly description =
    'Reads the text of the book in place: `chapter` (its number, as list_chapters shows it) from passage `passage` ' +
    `(default 1) on, or the passages around \`near\`, the number [n] of a passage this turn already found. Returns up to ` +
    `\`count\` passages (default ${DEFAULT_COUNT}, at most ${READ_PASSAGE_MAX_COUNT}), numbered so you can cite them like ` +
    "search results, e.g. [4]. Use it to read on from a passage a search found, or to read a chapter's opening. Only " +
    'chapters the reader has reached can be read.';
  readonly inputSchema = {
    type: 'object' as const,
    properties: {
      chapter: { type: 'integer', minimum: 0, description: 'the chapter number to read (as list_chapters shows it)' },
      passage: { type: 'integer', minimum: 1, description: 'the passage of the chapter to start at (default 1)' },
      near: { type: 'integer', minimum: 1, description: 'read around the passage this turn numbered [near] instead' },
      count: { type: 'integer', minimum: 1, maximum: READ_PASSAGE_MAX_COUNT, description: 'how many passages' },
      book: BOOK_PARAMETER,
    },
  };

  async run(input: unknown, ctx: ToolContext): Promise<ToolOutput> {
    const parsed = parseInput(input);
    if (typeof parsed === 'string') return { isError: true, content: parsed };
    if (parsed.at === 'near') return this.readNear(parsed, ctx);
    if (ctx.readingPosition !== null && parsed.chapter > ctx.readingPosition) {
      return {
        isError: true,
        content: `the reader has not reached chapter ${parsed.chapter} (they have read up to chapter ${ctx.readingPosition}): do not reveal what comes later`,
      };
    }
    const found = await bookToRead(this.books, parsed.book, ctx);
    if ('refusal' in found) return { isError: true, content: found.refusal };
    const read = await this.passages.inChapter(found.book.id, parsed.chapter, parsed.passage, parsed.count);
    if (read.length === 0) {
      return {
        isError: true,
        content: `chapter ${parsed.chapter} has no passage ${parsed.passage} (list_chapters shows the chapters and their passages)`,
      };
    }
    return numbered(read, found.book.id, ctx);
  }

  private async readNear(input: Extract<ReadInput, { at: 'near' }>, ctx: ToolContext): Promise<ToolOutput> {
    const chunkId = ctx.numberedPassages?.get(input.near);
    if (!chunkId) {
      const known = [...(ctx.numberedPassages?.keys() ?? [])];
      return {
        isError: true,
        content: known.length
          ? `this turn numbered passages ${known.map((n) => `[${n}]`).join(', ')}: there is no [${input.near}]`
          : 'this turn has not numbered any passage yet: search or read a chapter first',
      };
    }
    const before = Math.floor((input.count - 1) / 2);
    for (const bookId of input.book ? [input.book] : ctx.bookIds) {
      const found = await bookToRead(this.books, bookId, ctx);
      if ('refusal' in found) continue;
      const read = await this.passages.around(bookId, chunkId, {
        before,
        after: input.count - 1 - before,
        maxChapter: ctx.readingPosition,
      });
      if (read.length) return numbered(read, bookId, ctx);
    }
    return { isError: true, content: `passage [${input.near}] is no longer available to read` };
  }
}

/** The passages numbered from the turn's next citation number, as search results are. */
function numbered(read: ReadPassage[], bookId: string, ctx: ToolContext): ToolOutput {
  const first = ctx.citationStart ?? 1;
  const several = ctx.bookIds.length > 1;
  const { chapter } = read[0];
  const head = `${chapter}, passage${read.length === 1 ? '' : 's'} ${read[0].position}${read.length > 1 ? `–${read[read.length - 1].position}` : ''} of ${read[0].of}`;
  const parts: ToolContentPart[] = [`${head}${readingScope(ctx.readingPosition)}:`];
  for (const [i, p] of read.entries()) {
    parts.push(`\n\n[${first + i}] ${several ? `(book ${bookId}) · ` : ''}${locate(p)}\n`, { passage: p.chunkId });
  }
  const texts = new Map(read.map((p) => [p.chunkId, p.text]));
  return {
    content: joinParts(parts, (id) => texts.get(id) ?? ''),
    contentParts: parts,
    chunks: read.map((p) => citationOf(p, 1, several ? bookId : undefined)),
  };
}

/** The tool's input, or why it is not valid (the model reads the reason and may retry). */
function parseInput(input: unknown): ReadInput | string {
  const shape =
    'input must be an object {"chapter": integer, "passage"?: integer, "count"?: integer} or {"near": integer}';
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return shape;
  const { chapter, passage, near, count, book, ...rest } = input as Record<string, unknown>;
  const unknown = Object.keys(rest);
  if (unknown.length) return `unknown input field${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}`;
  const int = (v: unknown, min: number, max = 2 ** 31 - 1) =>
    typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;
  if (count !== undefined && !int(count, 1, READ_PASSAGE_MAX_COUNT))
    return `count must be an integer from 1 to ${READ_PASSAGE_MAX_COUNT}`;
  if (book !== undefined && typeof book !== 'string') return 'book must be a book id (a string)';
  const common = { count: (count as number | undefined) ?? DEFAULT_COUNT, ...(book !== undefined ? { book } : {}) };
  if (near !== undefined) {
    if (chapter !== undefined || passage !== undefined)
      return 'give either `near` or `chapter` (with `passage`), not both';
    if (!int(near, 1)) return 'near must be a passage number [n] (an integer from 1)';
    return { at: 'near', near: near as number, ...common };
  }
  if (!int(chapter, 0)) return 'chapter must be a chapter number (an integer from 0), or give `near`';
  if (passage !== undefined && !int(passage, 1)) return 'passage must be an integer from 1';
  return { at: 'chapter', chapter: chapter as number, passage: (passage as number | undefined) ?? 1, ...common };
}
