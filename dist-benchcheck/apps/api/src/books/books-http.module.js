"use strict";
var __decorate = (this && this.__decorate) || function (decorators, target, key, desc) {
    var c = arguments.length, r = c < 3 ? target : desc === null ? desc = Object.getOwnPropertyDescriptor(target, key) : desc, d;
    if (typeof Reflect === "object" && typeof Reflect.decorate === "function") r = Reflect.decorate(decorators, target, key, desc);
    else for (var i = decorators.length - 1; i >= 0; i--) if (d = decorators[i]) r = (c < 3 ? d(r) : c > 3 ? d(target, key, r) : d(target, key)) || r;
    return c > 3 && r && Object.defineProperty(target, key, r), r;
};
Object.defineProperty(exports, "__esModule", { value: true });
exports.BooksHttpModule = void 0;
const common_1 = require("@nestjs/common");
const books_1 = require("@parley/books");
const books_controller_1 = require("./books.controller");
/** The /books routes over the books library. */
let BooksHttpModule = class BooksHttpModule {
};
exports.BooksHttpModule = BooksHttpModule;
exports.BooksHttpModule = BooksHttpModule = __decorate([
    (0, common_1.Module)({
        imports: [books_1.BooksModule],
        controllers: [books_controller_1.BooksController],
    })
], BooksHttpModule);
//# sourceMappingURL=books-http.module.js.map