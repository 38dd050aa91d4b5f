"use strict";
var __decorate = (this && this.__decorate) || function (decorators, target, key, desc) {
    var c = arguments.length, r = c < 3 ? target : desc === null ? desc = Object.getOwnPropertyDescriptor(target, key) : desc, d;
    if (typeof Reflect === "object" && typeof Reflect.decorate === "function") r = Reflect.decorate(decorators, target, key, desc);
    else for (var i = decorators.length - 1; i >= 0; i--) if (d = decorators[i]) r = (c < 3 ? d(r) : c > 3 ? d(target, key, r) : d(target, key)) || r;
    return c > 3 && r && Object.defineProperty(target, key, r), r;
};
Object.defineProperty(exports, "__esModule", { value: true });
exports.BooksModule = void 0;
const common_1 = require("@nestjs/common");
const books_repository_1 = require("./books.repository");
const books_service_1 = require("./books.service");
const search_book_tool_1 = require("./search-book.tool");
/**
 * Books: ingest, retrieval and the search_book agent tool. Needs the global DatabaseModule
 * (the pg Pool). The agent module collects SearchBookTool into its tool registry.
 */
let BooksModule = class BooksModule {
};
exports.BooksModule = BooksModule;
exports.BooksModule = BooksModule = __decorate([
    (0, common_1.Module)({
        providers: [books_repository_1.BooksRepository, books_service_1.BooksService, search_book_tool_1.SearchBookTool],
        exports: [books_service_1.BooksService, search_book_tool_1.SearchBookTool],
    })
], BooksModule);
//# sourceMappingURL=books.module.js.map