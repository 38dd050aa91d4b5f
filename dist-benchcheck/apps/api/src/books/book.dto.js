"use strict";
var __decorate = (this && this.__decorate) || function (decorators, target, key, desc) {
    var c = arguments.length, r = c < 3 ? target : desc === null ? desc = Object.getOwnPropertyDescriptor(target, key) : desc, d;
    if (typeof Reflect === "object" && typeof Reflect.decorate === "function") r = Reflect.decorate(decorators, target, key, desc);
    else for (var i = decorators.length - 1; i >= 0; i--) if (d = decorators[i]) r = (c < 3 ? d(r) : c > 3 ? d(target, key, r) : d(target, key)) || r;
    return c > 3 && r && Object.defineProperty(target, key, r), r;
};
var __metadata = (this && this.__metadata) || function (k, v) {
    if (typeof Reflect === "object" && typeof Reflect.metadata === "function") return Reflect.metadata(k, v);
};
Object.defineProperty(exports, "__esModule", { value: true });
exports.SearchResultDto = exports.SearchHitDto = exports.BookListDto = exports.BookDto = exports.ChapterDto = exports.SearchBookQueryDto = exports.UploadBookDto = exports.CreateBookDto = exports.SEARCH_K_MAX = exports.SEARCH_QUERY_MAX = exports.BOOK_TITLE_MAX = void 0;
const swagger_1 = require("@nestjs/swagger");
const class_transformer_1 = require("class-transformer");
const class_validator_1 = require("class-validator");
const books_1 = require("@parley/books");
exports.BOOK_TITLE_MAX = 200;
exports.SEARCH_QUERY_MAX = 500;
exports.SEARCH_K_MAX = 20;
/**
 * POST /books, as JSON {title, author?, format, content} or as multipart/form-data with a `file`
 * (title, author and format then optional: the title defaults to the file name, the format is
 * read from the extension or the part's content type). Which fields are required depends on
 * whether a file came, so the controller checks that; this class checks each field's shape.
 */
class CreateBookDto {
}
exports.CreateBookDto = CreateBookDto;
__decorate([
    (0, swagger_1.ApiPropertyOptional)({ minLength: 1, maxLength: exports.BOOK_TITLE_MAX, description: 'required with JSON content' }),
    (0, class_validator_1.IsOptional)(),
    (0, class_validator_1.IsString)(),
    (0, class_validator_1.MinLength)(1),
    (0, class_validator_1.MaxLength)(exports.BOOK_TITLE_MAX),
    __metadata("design:type", String)
], CreateBookDto.prototype, "title", void 0);
__decorate([
    (0, swagger_1.ApiPropertyOptional)({ maxLength: exports.BOOK_TITLE_MAX }),
    (0, class_validator_1.IsOptional)(),
    (0, class_validator_1.IsString)(),
    (0, class_validator_1.MaxLength)(exports.BOOK_TITLE_MAX),
    __metadata("design:type", String)
], CreateBookDto.prototype, "author", void 0);
__decorate([
    (0, swagger_1.ApiPropertyOptional)({ enum: books_1.BOOK_FORMATS, description: 'required with JSON content' }),
    (0, class_validator_1.IsOptional)(),
    (0, class_validator_1.IsIn)(books_1.BOOK_FORMATS),
    __metadata("design:type", String)
], CreateBookDto.prototype, "format", void 0);
__decorate([
    (0, swagger_1.ApiPropertyOptional)({
        description: 'the book: text or Markdown as is, a PDF base64-encoded; required without a file',
    }),
    (0, class_validator_1.IsOptional)(),
    (0, class_validator_1.IsString)(),
    __metadata("design:type", String)
], CreateBookDto.prototype, "content", void 0);
/** The multipart form, for the OpenAPI document only. */
class UploadBookDto {
}
exports.UploadBookDto = UploadBookDto;
__decorate([
    (0, swagger_1.ApiProperty)({
        type: 'string',
        format: 'binary',
        description: `.txt, .md or .pdf, at most ${books_1.MAX_BOOK_BYTES / 1024 / 1024} MB`,
    }),
    __metadata("design:type", Object)
], UploadBookDto.prototype, "file", void 0);
__decorate([
    (0, swagger_1.ApiPropertyOptional)({ maxLength: exports.BOOK_TITLE_MAX, description: 'defaults to the file name' }),
    __metadata("design:type", String)
], UploadBookDto.prototype, "title", void 0);
__decorate([
    (0, swagger_1.ApiPropertyOptional)({ maxLength: exports.BOOK_TITLE_MAX }),
    __metadata("design:type", String)
], UploadBookDto.prototype, "author", void 0);
__decorate([
    (0, swagger_1.ApiPropertyOptional)({ enum: books_1.BOOK_FORMATS, description: 'defaults to what the file name or content type says' }),
    __metadata("design:type", String)
], UploadBookDto.prototype, "format", void 0);
class SearchBookQueryDto {
}
exports.SearchBookQueryDto = SearchBookQueryDto;
__decorate([
    (0, swagger_1.ApiProperty)({ minLength: 1, maxLength: exports.SEARCH_QUERY_MAX, description: "a reader's question or key words" }),
    (0, class_validator_1.IsString)(),
    (0, class_validator_1.MinLength)(1),
    (0, class_validator_1.MaxLength)(exports.SEARCH_QUERY_MAX),
    __metadata("design:type", String)
], SearchBookQueryDto.prototype, "q", void 0);
__decorate([
    (0, swagger_1.ApiPropertyOptional)({ minimum: 1, maximum: exports.SEARCH_K_MAX, default: 5 }),
    (0, class_validator_1.IsOptional)(),
    (0, class_transformer_1.Type)(() => Number),
    (0, class_validator_1.IsInt)(),
    (0, class_validator_1.Min)(1),
    (0, class_validator_1.Max)(exports.SEARCH_K_MAX),
    __metadata("design:type", Number)
], SearchBookQueryDto.prototype, "k", void 0);
class ChapterDto {
}
exports.ChapterDto = ChapterDto;
__decorate([
    (0, swagger_1.ApiProperty)({ description: '1..N in book order; what readingPosition counts' }),
    __metadata("design:type", Number)
], ChapterDto.prototype, "index", void 0);
__decorate([
    (0, swagger_1.ApiProperty)(),
    __metadata("design:type", String)
], ChapterDto.prototype, "title", void 0);
class BookDto {
}
exports.BookDto = BookDto;
__decorate([
    (0, swagger_1.ApiProperty)({ format: 'uuid' }),
    __metadata("design:type", String)
], BookDto.prototype, "id", void 0);
__decorate([
    (0, swagger_1.ApiProperty)(),
    __metadata("design:type", String)
], BookDto.prototype, "title", void 0);
__decorate([
    (0, swagger_1.ApiProperty)({ type: String, nullable: true }),
    __metadata("design:type", Object)
], BookDto.prototype, "author", void 0);
__decorate([
    (0, swagger_1.ApiProperty)({ enum: books_1.BOOK_FORMATS }),
    __metadata("design:type", String)
], BookDto.prototype, "format", void 0);
__decorate([
    (0, swagger_1.ApiProperty)({ type: [ChapterDto] }),
    __metadata("design:type", Array)
], BookDto.prototype, "chapters", void 0);
__decorate([
    (0, swagger_1.ApiProperty)(),
    __metadata("design:type", Number)
], BookDto.prototype, "chunkCount", void 0);
__decorate([
    (0, swagger_1.ApiProperty)({ format: 'date-time' }),
    __metadata("design:type", String)
], BookDto.prototype, "createdAt", void 0);
class BookListDto {
}
exports.BookListDto = BookListDto;
__decorate([
    (0, swagger_1.ApiProperty)({ type: [BookDto] }),
    __metadata("design:type", Array)
], BookListDto.prototype, "items", void 0);
__decorate([
    (0, swagger_1.ApiProperty)({ type: String, nullable: true, description: 'always null: every book is listed' }),
    __metadata("design:type", Object)
], BookListDto.prototype, "nextCursor", void 0);
class SearchHitDto {
}
exports.SearchHitDto = SearchHitDto;
__decorate([
    (0, swagger_1.ApiProperty)({ format: 'uuid' }),
    __metadata("design:type", String)
], SearchHitDto.prototype, "chunkId", void 0);
__decorate([
    (0, swagger_1.ApiProperty)({ description: 'the chapter heading' }),
    __metadata("design:type", String)
], SearchHitDto.prototype, "chapter", void 0);
__decorate([
    (0, swagger_1.ApiProperty)(),
    __metadata("design:type", Number)
], SearchHitDto.prototype, "chapterIndex", void 0);
__decorate([
    (0, swagger_1.ApiProperty)({ type: String, nullable: true }),
    __metadata("design:type", Object)
], SearchHitDto.prototype, "section", void 0);
__decorate([
    (0, swagger_1.ApiProperty)({ type: Number, nullable: true }),
    __metadata("design:type", Object)
], SearchHitDto.prototype, "page", void 0);
__decorate([
    (0, swagger_1.ApiProperty)(),
    __metadata("design:type", String)
], SearchHitDto.prototype, "text", void 0);
__decorate([
    (0, swagger_1.ApiProperty)({ minimum: 0, maximum: 1 }),
    __metadata("design:type", Number)
], SearchHitDto.prototype, "score", void 0);
class SearchResultDto {
}
exports.SearchResultDto = SearchResultDto;
__decorate([
    (0, swagger_1.ApiProperty)({ type: [SearchHitDto] }),
    __metadata("design:type", Array)
], SearchResultDto.prototype, "items", void 0);
//# sourceMappingURL=book.dto.js.map