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
var __param = (this && this.__param) || function (paramIndex, decorator) {
    return function (target, key) { decorator(target, key, paramIndex); }
};
Object.defineProperty(exports, "__esModule", { value: true });
exports.BooksController = void 0;
const common_1 = require("@nestjs/common");
const platform_express_1 = require("@nestjs/platform-express");
const swagger_1 = require("@nestjs/swagger");
const multer_1 = require("multer");
const books_1 = require("@parley/books");
const current_user_decorator_1 = require("../auth/current-user.decorator");
const book_dto_1 = require("./book.dto");
const Id = () => new common_1.ParseUUIDPipe({ version: undefined, exceptionFactory: () => new common_1.BadRequestException(['id must be a UUID']) });
const BASE64 = /^[A-Za-z0-9+/\s]*={0,2}\s*$/;
let BooksController = class BooksController {
    constructor(books) {
        this.books = books;
    }
    create(user, body, file) {
        const input = file ? fromFile(body, file) : fromJson(body);
        return this.mapErrors(() => this.books.ingest(user.id, input));
    }
    async list(user) {
        return { items: await this.books.list(user.id), nextCursor: null };
    }
    show(user, id) {
        return this.mapErrors(() => this.books.get(user.id, id));
    }
    async remove(user, id) {
        await this.mapErrors(() => this.books.delete(user.id, id));
    }
    search(user, id, query) {
        return this.mapErrors(() => this.books.search(user.id, id, query.q, { k: query.k }));
    }
    /** The books library's typed errors as HTTP errors. */
    async mapErrors(work) {
        try {
            return await work();
        }
        catch (e) {
            if (e instanceof books_1.BookNotFoundError)
                throw new common_1.NotFoundException('book not found');
            if (e instanceof books_1.BookRejectedError)
                throw new common_1.HttpException(e.message, e.status);
            throw e;
        }
    }
};
exports.BooksController = BooksController;
__decorate([
    (0, common_1.Post)(),
    (0, swagger_1.ApiOperation)({
        summary: 'Ingest a book (JSON, or multipart with a file for anything over the JSON body limit)',
        description: `Text (Project Gutenberg headers and licence are dropped), Markdown or PDF, at most ${books_1.MAX_BOOK_BYTES / 1024 / 1024} MB.`,
    }),
    (0, swagger_1.ApiConsumes)('application/json', 'multipart/form-data'),
    (0, swagger_1.ApiBody)({ schema: { oneOf: [{ $ref: (0, swagger_1.getSchemaPath)(book_dto_1.CreateBookDto) }, { $ref: (0, swagger_1.getSchemaPath)(book_dto_1.UploadBookDto) }] } }),
    (0, swagger_1.ApiCreatedResponse)({ type: book_dto_1.BookDto }),
    (0, common_1.UseInterceptors)((0, platform_express_1.FileInterceptor)('file', { storage: (0, multer_1.memoryStorage)(), limits: { fileSize: books_1.MAX_BOOK_BYTES, files: 1, fields: 10 } })),
    __param(0, (0, current_user_decorator_1.CurrentUser)()),
    __param(1, (0, common_1.Body)()),
    __param(2, (0, common_1.UploadedFile)()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [Object, book_dto_1.CreateBookDto, Object]),
    __metadata("design:returntype", Promise)
], BooksController.prototype, "create", null);
__decorate([
    (0, common_1.Get)(),
    (0, swagger_1.ApiOperation)({ summary: "List the caller's books, newest first" }),
    (0, swagger_1.ApiOkResponse)({ type: book_dto_1.BookListDto }),
    __param(0, (0, current_user_decorator_1.CurrentUser)()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [Object]),
    __metadata("design:returntype", Promise)
], BooksController.prototype, "list", null);
__decorate([
    (0, common_1.Get)(':id'),
    (0, swagger_1.ApiOperation)({ summary: 'Show a book with its chapters' }),
    (0, swagger_1.ApiOkResponse)({ type: book_dto_1.BookDto }),
    __param(0, (0, current_user_decorator_1.CurrentUser)()),
    __param(1, (0, common_1.Param)('id', Id())),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [Object, String]),
    __metadata("design:returntype", Promise)
], BooksController.prototype, "show", null);
__decorate([
    (0, common_1.Delete)(':id'),
    (0, common_1.HttpCode)(204),
    (0, swagger_1.ApiOperation)({ summary: 'Delete a book and its passages' }),
    (0, swagger_1.ApiNoContentResponse)(),
    __param(0, (0, current_user_decorator_1.CurrentUser)()),
    __param(1, (0, common_1.Param)('id', Id())),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [Object, String]),
    __metadata("design:returntype", Promise)
], BooksController.prototype, "remove", null);
__decorate([
    (0, common_1.Get)(':id/search'),
    (0, swagger_1.ApiOperation)({
        summary: "Search a book's passages, as the agent's search_book tool does (without a reading position)",
    }),
    (0, swagger_1.ApiOkResponse)({ type: book_dto_1.SearchResultDto }),
    __param(0, (0, current_user_decorator_1.CurrentUser)()),
    __param(1, (0, common_1.Param)('id', Id())),
    __param(2, (0, common_1.Query)()),
    __metadata("design:type", Function),
    __metadata("design:paramtypes", [Object, String, book_dto_1.SearchBookQueryDto]),
    __metadata("design:returntype", void 0)
], BooksController.prototype, "search", null);
exports.BooksController = BooksController = __decorate([
    (0, swagger_1.ApiTags)('books'),
    (0, swagger_1.ApiBearerAuth)(),
    (0, swagger_1.ApiExtraModels)(book_dto_1.CreateBookDto, book_dto_1.UploadBookDto),
    (0, common_1.Controller)('books'),
    __metadata("design:paramtypes", [books_1.BooksService])
], BooksController);
function fromFile(body, file) {
    if (body.content !== undefined)
        throw new common_1.BadRequestException(['send either a file or content, not both']);
    const format = body.format ?? (0, books_1.formatOfFile)(file.originalname, file.mimetype);
    if (!format) {
        throw new common_1.HttpException(`cannot tell the format of "${file.originalname}": name it .txt, .md or .pdf, or send format`, 415);
    }
    return { title: body.title ?? (0, books_1.titleOfFile)(file.originalname), author: body.author, format, content: file.buffer };
}
function fromJson(body) {
    const missing = ['title', 'format', 'content'].filter((f) => body[f] === undefined);
    if (missing.length) {
        throw new common_1.BadRequestException([...missing.map((f) => `${f} is required (or upload the book as a multipart file)`)]);
    }
    const { title, author, format, content } = body;
    if (format !== 'pdf')
        return { title, author, format, content };
    if (!BASE64.test(content))
        throw new common_1.BadRequestException(['content must be base64 for a pdf']);
    return { title, author, format, content: Buffer.from(content, 'base64') };
}
//# sourceMappingURL=books.controller.js.map