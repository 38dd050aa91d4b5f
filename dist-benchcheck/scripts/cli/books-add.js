"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.booksAdd = booksAdd;
/**
 * `npm run cli -- books add <file> --user <id> [--title …] [--author …]`: ingests a local .txt,
 * .md or .pdf for a user, through the same BooksService the API uses (without Nest), and prints
 * the stored book as JSON.
 */
const promises_1 = require("node:fs/promises");
const books_1 = require("@parley/books");
async function booksAdd(args, deps) {
    const print = deps.print ?? ((line) => console.log(line));
    const format = (0, books_1.formatOfFile)(args.file);
    if (!format)
        throw new Error(`cannot tell the format of ${args.file}: name it .txt, .md or .pdf`);
    let content;
    try {
        content = await (0, promises_1.readFile)(args.file);
    }
    catch (e) {
        throw new Error(`cannot read ${args.file}: ${e.message}`);
    }
    const books = new books_1.BooksService(new books_1.BooksRepository(deps.pool));
    try {
        const book = await books.ingest(args.user, {
            title: args.title ?? (0, books_1.titleOfFile)(args.file),
            author: args.author,
            format,
            content,
        });
        print(JSON.stringify(book, null, 2));
        return book;
    }
    catch (e) {
        if (e instanceof books_1.BookRejectedError)
            throw new Error(`${args.file} was not stored: ${e.message}`);
        throw e;
    }
}
//# sourceMappingURL=books-add.js.map