import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Inject,
  Param,
  Patch,
  Post,
  Query,
  Req,
  Res,
  UseInterceptors,
} from '@nestjs/common';
import { AppConfig, CONFIG } from '@parley/config';
import {
  ApiBearerAuth,
  ApiAcceptedResponse,
  ApiExtraModels,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiSecurity,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  BINARY_BOOK_FORMATS,
  Book,
  BookIngest,
  BookPage,
  BookQueries,
  BookSearch,
  BookShelf,
  formatOfFile,
  IngestBookInput,
  MAX_BOOK_BYTES,
  titleOfFile,
} from '@parley/books';
import { AllowQueryToken, AuthUser } from '../auth/auth.guard';
import { CurrentUser } from '../auth/current-user.decorator';
import { Erasures } from '@parley/erasure';
import { TurnEnqueuer } from '../conversations/turn-enqueuer';
import { FileUpload, UploadedFileBuffer } from '../http/file-upload.interceptor';
import { ReaderBudget } from '../usage/reader-budget';
import { InvalidCursorError } from '@parley/read-models';
import { invalid, problem } from '../http/problem.exception';
import { Uuid } from '../http/uuid-param';
import { ApiBodyByMediaType } from '../openapi/api-body-by-media-type';
import { ApiIdParams } from '../openapi/api-id-params';
import { AUTH_PROBLEMS, ApiProblems, BODY_PROBLEMS } from '../openapi/api-problems';
import { ApiEventStream } from '../openapi/api-event-stream';
import { BookIngestDispatch } from './book-ingest-dispatch';
import { BookEventStream } from './book-event-stream';
import { assertMayChange, bookReaderOf, catalogueToPublishIn } from './book-permissions';
import {
  BookDto,
  BookListDto,
  CreateBookDto,
  CreateBookJsonDto,
  ListBooksQueryDto,
  SearchBookQueryDto,
  SearchResultDto,
  UpdateBookDto,
  UploadBookDto,
} from './book.dto';
import { RateLimits } from '../rate-limits/rate-limits';
import { StreamSlots } from '../rate-limits/stream-slots';

/** base64 once whitespace is removed (a regex with overlapping \s classes backtracks badly) */
const isBase64 = (s: string): boolean => /^[A-Za-z0-9+/]*={0,2}$/.test(s.replace(/\s+/g, ''));

@ApiTags('books')
@ApiBearerAuth()
@ApiProblems(AUTH_PROBLEMS)
@ApiExtraModels(CreateBookJsonDto, UploadBookDto)
@Controller('books')
export class BooksController {
  constructor(
    private readonly books: BookQueries,
    private readonly shelf: BookShelf,
    private readonly bookIngest: BookIngest,
    private readonly bookSearch: BookSearch,
    private readonly erasures: Erasures,
    private readonly enqueuer: TurnEnqueuer,
    private readonly ingest: BookIngestDispatch,
    private readonly events: BookEventStream,
    private readonly budget: ReaderBudget,
    private readonly rateLimits: RateLimits,
    private readonly slots: StreamSlots,
    @Inject(CONFIG) private readonly config: AppConfig,
  ) {}

  @Post()
  @HttpCode(202)
  @ApiOperation({
    summary:
      'Upload a book (JSON, or multipart with a file for anything over the JSON body limit); it ingests in the background',
    description:
      'Text (Project Gutenberg headers and licence are dropped), Markdown, PDF, EPUB 2 or 3, HTML or Word (.docx), ' +
      `at most ${MAX_BOOK_BYTES / 1024 / 1024} MB (docs/books.md says what each keeps). ` +
      'Answers 202 with the book `ingesting`; follow it on GET /books/{id} or GET /books/{id}/events until `ready` or ' +
      '`failed` (with `error.code`). 429 with Retry-After when the caller or the service has too many books ingesting. ' +
      "With `visibility: catalogue` (a publisher's token only, else 403 `forbidden`) the book is published for every " +
      "reader of the publisher's tenant (`parley_tenant`), ingested and paid for once, by the publisher.",
  })
  @ApiBodyByMediaType({
    // JSON: the book in `content`, with its title and format
    'application/json': { $ref: getSchemaPath(CreateBookJsonDto) },
    'multipart/form-data': { $ref: getSchemaPath(UploadBookDto) },
  })
  @ApiAcceptedResponse({ type: BookDto })
  @ApiProblems(
    BODY_PROBLEMS,
    'book_invalid',
    'book_no_text',
    'book_too_large',
    'book_unsupported_type',
    'book_ingest_busy',
    'budget_exceeded',
    'forbidden',
  )
  @UseInterceptors(FileUpload('file', { fileSize: MAX_BOOK_BYTES, files: 1, fields: 10 }))
  async create(
    @CurrentUser() user: AuthUser,
    @Body() body: CreateBookDto,
    @UploadedFileBuffer() file?: UploadedFileBuffer,
  ): Promise<Book> {
    const catalogue = body.visibility === 'catalogue' ? catalogueToPublishIn(user) : undefined;
    const input = file ? fromFile(body, file) : fromJson(body);
    // contextual retrieval makes model calls at ingestion: the uploader (the publisher) pays, within their budget
    const spends = this.config.contextual !== null;
    if (spends) await this.budget.assertWithin(user);
    const book = await this.bookIngest.accept(user.id, input, undefined, {
      ...(spends ? this.budget.inForce(user) : {}),
      ...(catalogue === undefined ? {} : { catalogue }),
    });
    await this.ingest.enqueue(book.id);
    return book;
  }

  @Get()
  @ApiOperation({
    summary: "List the caller's own books and their tenant's catalogue, newest first, a page at a time",
    description: 'Each book says its `visibility`; `?visibility=private` or `catalogue` lists one kind.',
  })
  @ApiOkResponse({ type: BookListDto })
  @ApiProblems('validation_failed')
  async list(@CurrentUser() user: AuthUser, @Query() q: ListBooksQueryDto): Promise<BookPage> {
    try {
      return await this.books.list(bookReaderOf(user), {
        visibility: q.visibility,
        limit: q.limit ?? 100,
        cursor: q.cursor,
      });
    } catch (e) {
      if (e instanceof InvalidCursorError)
        throw invalid('cursor', 'cursor is not valid: pass the nextCursor of a previous page unchanged');
      throw e;
    }
  }

  @Get(':id')
  @ApiIdParams('id')
  @ApiOperation({ summary: 'Show a book with its chapters, or how far its ingestion got (status, progress, error)' })
  @ApiOkResponse({ type: BookDto })
  @ApiProblems('validation_failed', 'book_not_found')
  show(@CurrentUser() user: AuthUser, @Param('id', Uuid('id')) id: string): Promise<Book> {
    return this.books.get(bookReaderOf(user), id);
  }

  @Patch(':id')
  @ApiIdParams('id')
  @ApiOperation({
    summary: 'Rename a book',
    description: "The caller's own book, or a catalogue book of their tenant by a publisher (anyone else: 403).",
  })
  @ApiOkResponse({ type: BookDto })
  @ApiProblems(BODY_PROBLEMS, 'book_not_found', 'forbidden')
  async rename(
    @CurrentUser() user: AuthUser,
    @Param('id', Uuid('id')) id: string,
    @Body() body: UpdateBookDto,
  ): Promise<Book> {
    assertMayChange(user, await this.books.shelved(bookReaderOf(user), id));
    const renamed = await this.shelf.rename(id, body.title.trim());
    if (!renamed) throw problem('book_not_found', `book ${id} not found`);
    return renamed;
  }

  @Get(':id/events')
  @ApiIdParams('id')
  @AllowQueryToken()
  @ApiSecurity('access_token')
  @ApiOperation({ summary: "SSE: the book's ingestion as it goes" })
  @ApiEventStream(
    '`event: progress` with the book (BookDto: status, progress) whenever it changes, then one `event: ready` or ' +
      '`event: failed` with the book, and the stream ends (at once for a book already done).',
    'BookStreamFrame',
  )
  @ApiProblems('validation_failed', 'book_not_found', 'rate_limited')
  async followIngest(
    @CurrentUser() user: AuthUser,
    @Param('id', Uuid('id')) id: string,
    @Req() req: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const reader = bookReaderOf(user);
    await this.books.get(reader, id); // 404 before the stream starts
    // a stream like a conversation's: one of the reader's SSE_MAX_STREAMS_PER_READER
    await this.slots.serving(user.id, reply, () => this.events.serve(reader, id, req.raw, reply.raw));
  }

  @Delete(':id')
  @ApiIdParams('id')
  @HttpCode(204)
  @ApiOperation({
    summary: 'Erase a book, its upload and passages, and every conversation that ever had it as a source',
    description:
      'Each conversation is erased as DELETE /conversations/{id} erases one (docs/erasure.md). A catalogue book is ' +
      "withdrawn by a publisher of its tenant (anyone else: 403): its data is erased, its readers' conversations stay.",
  })
  @ApiNoContentResponse({ description: 'deleted' })
  @ApiProblems('validation_failed', 'book_not_found', 'forbidden')
  async remove(@CurrentUser() user: AuthUser, @Param('id', Uuid('id')) id: string): Promise<void> {
    // 404 before touching anything (any status); 403 for a catalogue book the caller may only read
    assertMayChange(user, await this.books.shelved(bookReaderOf(user), id));
    const { conversations } = await this.erasures.book(user.id, id);
    for (const erased of conversations) await this.enqueuer.conversationErased(erased);
  }

  @Get(':id/search')
  @ApiIdParams('id')
  @ApiOperation({
    summary: "Search a book's passages, as the agent's search_book tool does (without a reading position)",
  })
  @ApiOkResponse({ type: SearchResultDto })
  @ApiProblems('validation_failed', 'book_not_found', 'book_not_ready', 'rate_limited')
  async search(@CurrentUser() user: AuthUser, @Param('id', Uuid('id')) id: string, @Query() query: SearchBookQueryDto) {
    await this.rateLimits.consume('searches', user.id); // a search may be an embeddings call
    return this.bookSearch.search(bookReaderOf(user), id, query.q, { k: query.k });
  }
}

function fromFile(body: CreateBookDto, file: UploadedFileBuffer): IngestBookInput {
  if (body.content !== undefined) throw invalid('content', 'send either a file or content, not both');
  const format = body.format ?? formatOfFile(file.originalname, file.mimetype);
  if (!format) {
    throw problem(
      'book_unsupported_type',
      `cannot tell the format of "${file.originalname}": name it .txt, .md, .pdf, .epub, .html or .docx, or send format`,
    );
  }
  return {
    title: body.title ?? titleOfFile(file.originalname),
    author: body.author,
    format,
    content: file.buffer,
    titleGiven: body.title !== undefined, // else the book's own title, once read, replaces the file's name
  };
}

function fromJson(body: CreateBookDto): IngestBookInput {
  const missing = (['title', 'format', 'content'] as const).filter((f) => body[f] === undefined || body[f] === null);
  if (missing.length) {
    const errors = missing.map((field) => ({
      field,
      message: `${field} is required (or upload the book as a multipart file)`,
    }));
    throw problem('validation_failed', errors.map((e) => e.message).join('; '), { errors });
  }
  const { title, author, format, content } = body as Required<CreateBookDto>;
  if (!BINARY_BOOK_FORMATS.includes(format)) return { title, author, format, content };
  if (!isBase64(content)) throw invalid('content', `content must be base64 for ${format}`);
  return { title, author, format, content: Buffer.from(content, 'base64') };
}
