import {
  BadRequestException,
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  HttpException,
  NotFoundException,
  Param,
  ParseUUIDPipe,
  Post,
  Query,
  Req,
  Res,
  UploadedFile,
  UseInterceptors,
} from '@nestjs/common';
import { FileInterceptor } from '@nestjs/platform-express';
import {
  ApiBearerAuth,
  ApiBody,
  ApiConsumes,
  ApiAcceptedResponse,
  ApiExtraModels,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiProduces,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import { Request, Response } from 'express';
import { memoryStorage } from 'multer';
import {
  Book,
  BookNotFoundError,
  BookNotReadyError,
  BookRejectedError,
  BooksService,
  formatOfFile,
  IngestBookInput,
  IngestBusyError,
  MAX_BOOK_BYTES,
  titleOfFile,
} from '@parley/books';
import { AllowQueryToken, AuthUser } from '../auth/auth.guard';
import { CurrentUser } from '../auth/current-user.decorator';
import { ConversationsService } from '../conversations/conversations.service';
import { TurnEnqueuer } from '../conversations/turn-enqueuer';
import { BookIngestDispatch } from './book-ingest-dispatch';
import { BookEventStream } from './book-event-stream';
import { BookDto, BookListDto, CreateBookDto, SearchBookQueryDto, SearchResultDto, UploadBookDto } from './book.dto';

const Id = () =>
  new ParseUUIDPipe({ version: undefined, exceptionFactory: () => new BadRequestException(['id must be a UUID']) });

/** base64 once whitespace is removed (a regex with overlapping \s classes backtracks badly) */
const isBase64 = (s: string): boolean => /^[A-Za-z0-9+/]*={0,2}$/.test(s.replace(/\s+/g, ''));

@ApiTags('books')
@ApiBearerAuth()
@ApiExtraModels(CreateBookDto, UploadBookDto)
@Controller('books')
export class BooksController {
  constructor(
    private readonly books: BooksService,
    private readonly conversations: ConversationsService,
    private readonly enqueuer: TurnEnqueuer,
    private readonly ingest: BookIngestDispatch,
    private readonly events: BookEventStream,
  ) {}

  @Post()
  @HttpCode(202)
  @ApiOperation({
    summary:
      'Upload a book (JSON, or multipart with a file for anything over the JSON body limit); it ingests in the background',
    description:
      `Text (Project Gutenberg headers and licence are dropped), Markdown or PDF, at most ${MAX_BOOK_BYTES / 1024 / 1024} MB. ` +
      'Answers 202 with the book `ingesting`; follow it on GET /books/{id} or GET /books/{id}/events until `ready` or ' +
      '`failed` (with `error.code`). 429 with Retry-After when the caller or the service has too many books ingesting.',
  })
  @ApiConsumes('application/json', 'multipart/form-data')
  @ApiBody({ schema: { oneOf: [{ $ref: getSchemaPath(CreateBookDto) }, { $ref: getSchemaPath(UploadBookDto) }] } })
  @ApiAcceptedResponse({ type: BookDto })
  @UseInterceptors(
    FileInterceptor('file', { storage: memoryStorage(), limits: { fileSize: MAX_BOOK_BYTES, files: 1, fields: 10 } }),
  )
  async create(
    @CurrentUser() user: AuthUser,
    @Body() body: CreateBookDto,
    @UploadedFile() file?: Express.Multer.File,
  ): Promise<Book> {
    const input = file ? fromFile(body, file) : fromJson(body);
    const book = await this.mapErrors(() => this.books.accept(user.id, input));
    await this.ingest.enqueue(book.id);
    return book;
  }

  @Get()
  @ApiOperation({ summary: "List the caller's books, newest first" })
  @ApiOkResponse({ type: BookListDto })
  async list(@CurrentUser() user: AuthUser): Promise<{ items: Book[]; nextCursor: null }> {
    return { items: await this.books.list(user.id), nextCursor: null };
  }

  @Get(':id')
  @ApiOperation({ summary: 'Show a book with its chapters, or how far its ingestion got (status, progress, error)' })
  @ApiOkResponse({ type: BookDto })
  show(@CurrentUser() user: AuthUser, @Param('id', Id()) id: string): Promise<Book> {
    return this.mapErrors(() => this.books.get(user.id, id));
  }

  @Get(':id/events')
  @AllowQueryToken()
  @ApiProduces('text/event-stream')
  @ApiOperation({
    summary: "SSE: the book's ingestion as it goes",
    description:
      '`event: progress` with the book (status, progress) whenever it changes, then one `event: ready` or ' +
      '`event: failed` with the book, and the stream ends (at once for a book already done).',
  })
  async followIngest(
    @CurrentUser() user: AuthUser,
    @Param('id', Id()) id: string,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    await this.mapErrors(() => this.books.get(user.id, id)); // 404 before the stream starts
    await this.events.serve(user.id, id, req, res);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a book, its passages and its conversations (ConversationDeleted each)' })
  @ApiNoContentResponse()
  async remove(@CurrentUser() user: AuthUser, @Param('id', Id()) id: string): Promise<void> {
    await this.mapErrors(() => this.books.get(user.id, id)); // 404 before touching anything (any status)
    for (const deleted of await this.conversations.deleteAllAboutBook(user.id, id)) {
      await this.enqueuer.conversationDeleted(deleted);
    }
    await this.mapErrors(() => this.books.delete(user.id, id));
  }

  @Get(':id/search')
  @ApiOperation({
    summary: "Search a book's passages, as the agent's search_book tool does (without a reading position)",
  })
  @ApiOkResponse({ type: SearchResultDto })
  search(@CurrentUser() user: AuthUser, @Param('id', Id()) id: string, @Query() query: SearchBookQueryDto) {
    return this.mapErrors(() => this.books.search(user.id, id, query.q, { k: query.k }));
  }

  /** The books library's typed errors as HTTP errors. */
  private async mapErrors<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (e) {
      if (e instanceof BookNotFoundError) throw new NotFoundException('book not found');
      if (e instanceof BookRejectedError)
        throw new HttpException({ statusCode: e.status, message: e.message, code: e.code }, e.status);
      if (e instanceof BookNotReadyError)
        throw new HttpException({ statusCode: 409, message: e.message, code: 'book_not_ready' }, 409);
      if (e instanceof IngestBusyError)
        throw new HttpException(
          { statusCode: 429, message: e.message, code: 'book_ingest_busy', retryAfter: e.retryAfterS },
          429,
        );
      throw e;
    }
  }
}

function fromFile(body: CreateBookDto, file: Express.Multer.File): IngestBookInput {
  if (body.content !== undefined) throw new BadRequestException(['send either a file or content, not both']);
  const format = body.format ?? formatOfFile(file.originalname, file.mimetype);
  if (!format) {
    throw new HttpException(
      `cannot tell the format of "${file.originalname}": name it .txt, .md or .pdf, or send format`,
      415,
    );
  }
  return { title: body.title ?? titleOfFile(file.originalname), author: body.author, format, content: file.buffer };
}

function fromJson(body: CreateBookDto): IngestBookInput {
  const missing = (['title', 'format', 'content'] as const).filter((f) => body[f] === undefined || body[f] === null);
  if (missing.length) {
    throw new BadRequestException([...missing.map((f) => `${f} is required (or upload the book as a multipart file)`)]);
  }
  const { title, author, format, content } = body as Required<CreateBookDto>;
  if (format !== 'pdf') return { title, author, format, content };
  if (!isBase64(content)) throw new BadRequestException(['content must be base64 for a pdf']);
  return { title, author, format, content: Buffer.from(content, 'base64') };
}
