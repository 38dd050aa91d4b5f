import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Max, MaxLength, Min, MinLength } from 'class-validator';
import { BOOK_FORMATS, BOOK_VISIBILITIES, BookFormat, BookVisibility, MAX_BOOK_BYTES } from '@parley/books';

export const BOOK_TITLE_MAX = 200;
export const SEARCH_QUERY_MAX = 500;
export const SEARCH_K_MAX = 20;

/**
 * POST /books, as JSON {title, author?, format, content} or as multipart/form-data with a `file`
 * (title, author and format then optional: the title defaults to the file name, the format is
 * read from the extension or the part's content type). Which fields are required depends on
 * whether a file came, so the controller checks that; this class checks each field's shape.
 */
export class CreateBookDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: BOOK_TITLE_MAX, description: 'required with JSON content' })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(BOOK_TITLE_MAX)
  title?: string;

  @ApiPropertyOptional({ maxLength: BOOK_TITLE_MAX })
  @IsOptional()
  @IsString()
  @MaxLength(BOOK_TITLE_MAX)
  author?: string;

  @ApiPropertyOptional({ enum: BOOK_FORMATS, description: 'required with JSON content' })
  @IsOptional()
  @IsIn(BOOK_FORMATS)
  format?: BookFormat;

  @ApiPropertyOptional({
    description: 'the book: text, Markdown or HTML as is, a PDF, EPUB or DOCX base64-encoded; required without a file',
  })
  @IsOptional()
  @IsString()
  content?: string;

  @ApiPropertyOptional({
    enum: BOOK_VISIBILITIES,
    description:
      "private (the default): the caller's own; catalogue: publish it for every reader of the caller's tenant (a token whose parley_roles holds publisher; else 403 forbidden)",
  })
  @IsOptional()
  @IsIn(BOOK_VISIBILITIES)
  visibility?: BookVisibility;
}

/** POST /books as JSON, for the OpenAPI document only: title, format and content are then required. */
export class CreateBookJsonDto extends CreateBookDto {
  @ApiProperty({ required: true, minLength: 1, maxLength: BOOK_TITLE_MAX, description: 'the title' })
  override title!: string;

  @ApiProperty({ required: true, enum: BOOK_FORMATS, description: 'how to read content' })
  override format!: BookFormat;

  @ApiProperty({
    required: true,
    description: 'the book: text, Markdown or HTML as is, a PDF, EPUB or DOCX base64-encoded',
  })
  override content!: string;
}

/** The multipart form, for the OpenAPI document only. */
export class UploadBookDto {
  @ApiProperty({
    type: 'string',
    format: 'binary',
    description:
      `.txt, .md, .pdf, .epub, .html or .docx (or a part of type application/epub+zip, text/html, ` +
      `application/vnd.openxmlformats-officedocument.wordprocessingml.document…), at most ${MAX_BOOK_BYTES / 1024 / 1024} MB`,
  })
  file!: unknown;

  @ApiPropertyOptional({
    maxLength: BOOK_TITLE_MAX,
    description:
      "defaults to the title the book states (an EPUB's metadata, a Word document's properties, an HTML <title>), else the file name",
  })
  title?: string;

  @ApiPropertyOptional({ maxLength: BOOK_TITLE_MAX })
  author?: string;

  @ApiPropertyOptional({ enum: BOOK_FORMATS, description: 'defaults to what the file name or content type says' })
  format?: BookFormat;

  @ApiPropertyOptional({
    enum: BOOK_VISIBILITIES,
    description: 'private (the default), or catalogue: publish it (publishers only)',
  })
  visibility?: BookVisibility;
}

/** PATCH /books/:id */
export class UpdateBookDto {
  @ApiProperty({ minLength: 1, maxLength: BOOK_TITLE_MAX })
  @IsString()
  @MinLength(1)
  @MaxLength(BOOK_TITLE_MAX)
  title!: string;
}

/** GET /books: the caller's own books and their tenant's catalogue, newest first, a page at a time. */
export class ListBooksQueryDto {
  @ApiPropertyOptional({ enum: BOOK_VISIBILITIES, description: 'only this kind (default: both)' })
  @IsOptional()
  @IsIn(BOOK_VISIBILITIES)
  visibility?: BookVisibility;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 500, default: 100 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(500)
  limit?: number;

  @ApiPropertyOptional({ description: 'the nextCursor of the previous page' })
  @IsOptional()
  @IsString()
  @MaxLength(500)
  cursor?: string;
}

export class SearchBookQueryDto {
  @ApiProperty({ minLength: 1, maxLength: SEARCH_QUERY_MAX, description: "a reader's question or key words" })
  @IsString()
  @MinLength(1)
  @MaxLength(SEARCH_QUERY_MAX)
  q!: string;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: SEARCH_K_MAX, default: 5 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(SEARCH_K_MAX)
  k?: number;
}

export class ChapterDto {
  @ApiProperty({
    description:
      "the book's own chapter number, what readingPosition counts: 0 before chapter 1 (front matter, a preface)",
  })
  index!: number;

  @ApiProperty()
  title!: string;
}

export class BookProgressDto {
  @ApiProperty({ enum: ['queued', 'scanning', 'parsing', 'storing', 'embedding', 'done', 'failed'] })
  phase!: string;

  @ApiProperty({ description: "the upload's size in bytes" })
  bytesTotal!: number;

  @ApiPropertyOptional({ description: 'PDF pages read so far' })
  pagesDone?: number;

  @ApiPropertyOptional()
  pagesTotal?: number;

  @ApiProperty({ description: 'passages stored so far' })
  chunksWritten!: number;

  @ApiPropertyOptional({ description: 'passages to store, known once the book is parsed' })
  chunksTotal?: number;

  @ApiPropertyOptional({ description: 'passages embedded so far (only with an embeddings provider configured)' })
  embeddingsWritten?: number;

  @ApiPropertyOptional({ description: 'passages to embed' })
  embeddingsTotal?: number;
}

export class BookErrorDto {
  @ApiProperty({
    example: 'book_too_large_when_expanded',
    description:
      'book_too_large_when_expanded, book_too_many_pages, book_parse_timeout, book_parse_failed, book_no_text, book_ingest_failed',
  })
  code!: string;

  @ApiProperty()
  message!: string;
}

export class BookEmbeddingsDto {
  @ApiProperty({
    enum: ['embedding', 'ready', 'failed'],
    description: 'failed: the embeddings provider failed; the book is searched by full text only',
  })
  status!: string;

  @ApiProperty({ description: 'the embeddings model of its vectors' })
  model!: string;
}

export class BookDto {
  @ApiProperty({ format: 'uuid' })
  id!: string;

  @ApiProperty()
  title!: string;

  @ApiProperty({ type: String, nullable: true })
  author!: string | null;

  @ApiProperty({ enum: BOOK_FORMATS })
  format!: BookFormat;

  @ApiProperty({
    enum: BOOK_VISIBILITIES,
    description: "private: the uploader's own; catalogue: published for every reader of its tenant",
  })
  visibility!: BookVisibility;

  @ApiProperty({
    enum: ['ingesting', 'ready', 'failed'],
    description: 'only a ready book can be searched or discussed',
  })
  status!: string;

  @ApiProperty({ type: [ChapterDto] })
  chapters!: ChapterDto[];

  @ApiProperty()
  chunkCount!: number;

  @ApiProperty({ type: BookProgressDto })
  progress!: BookProgressDto;

  @ApiPropertyOptional({ type: BookErrorDto, description: 'only when status is failed' })
  error?: BookErrorDto;

  @ApiPropertyOptional({
    type: BookEmbeddingsDto,
    description: 'its vectors for semantic search; absent when no embeddings provider was configured',
  })
  embeddings?: BookEmbeddingsDto;

  @ApiProperty({ format: 'date-time' })
  createdAt!: string;
}

export class BookListDto {
  @ApiProperty({ type: [BookDto] })
  items!: BookDto[];

  @ApiProperty({ type: String, nullable: true, description: 'the cursor of the next page; null on the last' })
  nextCursor!: string | null;
}

export class SearchHitDto {
  @ApiProperty({ format: 'uuid' })
  chunkId!: string;

  @ApiProperty({ description: 'the chapter heading' })
  chapter!: string;

  @ApiProperty()
  chapterIndex!: number;

  @ApiProperty({ type: String, nullable: true })
  section!: string | null;

  @ApiProperty({ type: Number, nullable: true })
  page!: number | null;

  @ApiProperty()
  text!: string;

  @ApiProperty({ minimum: 0, maximum: 1 })
  score!: number;
}

export class SearchResultDto {
  @ApiProperty({ type: [SearchHitDto] })
  items!: SearchHitDto[];
}
