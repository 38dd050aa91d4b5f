"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.parseBook = parseBook;
exports.decodeText = decodeText;
const book_errors_1 = require("../book.errors");
const book_types_1 = require("../book.types");
const markdown_parser_1 = require("./markdown-parser");
const pdf_extractor_1 = require("./pdf-extractor");
const text_parser_1 = require("./text-parser");
const gutenberg_1 = require("./gutenberg");
/**
 * Checks an upload and parses it into chapters. Refusals are BookRejectedError: empty (400),
 * over 20 MB (413), binary or not the declared format (415), no readable text (400).
 */
async function parseBook(format, content, opts) {
    const size = typeof content === 'string' ? Buffer.byteLength(content, 'utf8') : content.length;
    if (size === 0)
        throw new book_errors_1.BookRejectedError(400, 'the book is empty');
    if (size > book_types_1.MAX_BOOK_BYTES)
        throw new book_errors_1.BookRejectedError(413, `the book is larger than ${book_types_1.MAX_BOOK_BYTES / 1024 / 1024} MB`);
    let book;
    if (format === 'pdf') {
        book = await parsePdf(typeof content === 'string' ? Buffer.from(content, 'latin1') : content, opts);
    }
    else {
        const text = decodeText(content);
        book = format === 'markdown' ? (0, markdown_parser_1.parseMarkdown)(text, opts) : (0, text_parser_1.parseText)(text, opts);
    }
    if (!book.chapters.some((c) => c.paragraphs.some((p) => /[\p{L}\p{N}]/u.test(p.text)))) {
        throw new book_errors_1.BookRejectedError(400, format === 'pdf' ? 'the PDF has no extractable text (a scan?)' : 'the book has no text');
    }
    return book;
}
/** UTF-8 only: NUL bytes, invalid sequences or a mass of control characters mean a binary file. */
function decodeText(content) {
    let text;
    if (typeof content === 'string') {
        text = content;
    }
    else {
        try {
            text = new TextDecoder('utf-8', { fatal: true }).decode(content);
        }
        catch {
            throw new book_errors_1.BookRejectedError(415, 'the file is not UTF-8 text');
        }
    }
    if (text.includes('\u0000'))
        throw new book_errors_1.BookRejectedError(415, 'the file is binary, not text');
    const controls = countControlCharacters(text);
    if (controls > 16 && controls > text.length / 100)
        throw new book_errors_1.BookRejectedError(415, 'the file is binary, not text');
    return text;
}
/** Control characters other than tab, newlines and form feed: rare in text, common in binaries. */
function countControlCharacters(text) {
    let n = 0;
    for (let i = 0; i < text.length; i++) {
        const c = text.charCodeAt(i);
        if ((c < 32 && c !== 9 && c !== 10 && c !== 12 && c !== 13) || c === 127)
            n++;
    }
    return n;
}
async function parsePdf(bytes, opts) {
    if (bytes.subarray(0, 1024).indexOf('%PDF-') < 0)
        throw new book_errors_1.BookRejectedError(415, 'the file is not a PDF');
    let pages;
    try {
        pages = await (0, pdf_extractor_1.extractPdfItems)(bytes);
    }
    catch (e) {
        if (!(e instanceof pdf_extractor_1.PdfReadError))
            throw e;
        const why = e.reason === 'password'
            ? 'the PDF is password-protected'
            : e.reason === 'timeout'
                ? e.message
                : 'the PDF cannot be read';
        throw new book_errors_1.BookRejectedError(e.reason === 'timeout' ? 400 : 415, why);
    }
    const lines = (0, gutenberg_1.stripGutenberg)((0, pdf_extractor_1.pdfItemsToLines)(pages), (l) => l.text);
    return (0, text_parser_1.parseLines)(lines, opts, true);
}
//# sourceMappingURL=parse-book.js.map