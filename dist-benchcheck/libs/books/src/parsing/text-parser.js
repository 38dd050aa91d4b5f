"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.parseText = parseText;
exports.parseLines = parseLines;
const gutenberg_1 = require("./gutenberg");
const headings_1 = require("./headings");
const parsed_book_1 = require("./parsed-book");
/** A table-of-contents entry has (almost) no text before the next heading. */
const MAX_TOC_ENTRY_LETTERS = 200;
const blank = (l) => l === undefined || l.text.trim() === '';
/** Plain text (Project Gutenberg or not) into chapters of paragraphs. */
function parseText(text, opts) {
    const lines = (0, gutenberg_1.stripGutenberg)((0, gutenberg_1.normaliseNewlines)(text).split('\n'));
    return parseLines(lines.map((t) => ({ text: t, page: null })), opts);
}
/**
 * Splits lines at chapter headings. Text before the first heading is kept as "Front matter" only
 * when it is long enough to be more than a title page; a text without headings is one chapter.
 */
function parseLines(lines, opts, dehyphenate = false) {
    const candidates = findCandidates(lines);
    const { headings, dropLines } = chooseHeadings(lines, candidates);
    const keep = (from, to) => lines.slice(from, to).filter((_, i) => !dropLines.has(from + i));
    const chapters = [];
    const firstStart = headings.length ? headings[0].start : lines.length;
    const preamble = keep(0, firstStart);
    const preambleParagraphs = (0, parsed_book_1.toParagraphs)(preamble, null, dehyphenate);
    if (headings.length === 0) {
        chapters.push({ title: opts.fallbackTitle, paragraphs: preambleParagraphs });
    }
    else if ((0, parsed_book_1.countLetters)(preambleParagraphs.map((p) => p.text).join(' ')) >= parsed_book_1.MIN_FRONT_MATTER_LETTERS) {
        chapters.push({ title: parsed_book_1.FRONT_MATTER_TITLE, paragraphs: preambleParagraphs });
    }
    headings.forEach((h, j) => {
        const next = j + 1 < headings.length ? headings[j + 1].start : lines.length;
        chapters.push({ title: h.title, paragraphs: (0, parsed_book_1.toParagraphs)(keep(h.end + 1, next), null, dehyphenate) });
    });
    return { chapters: chapters.map((c, i) => ({ index: i + 1, ...c })) };
}
/** Lines that read as headings where they stand: after a blank line, and standing alone. */
function findCandidates(lines) {
    const found = [];
    for (let i = 0; i < lines.length; i++) {
        if (!blank(lines[i - 1]) || blank(lines[i]))
            continue;
        const match = (0, headings_1.matchHeading)(lines[i].text.trim());
        if (!match)
            continue;
        if (blank(lines[i + 1])) {
            found.push({ start: i, end: i, match, title: match.label });
            continue;
        }
        if (match.inlineTitle || match.kind === 'named')
            continue; // a sentence that happens to start so
        // `CHAPTER I.` with its title on the next line
        const next = lines[i + 1].text.trim().replace(/\s+/g, ' ');
        if (next.length <= 80 && !/^\p{Ll}/u.test(next) && !/[,;:]$/.test(next) && blank(lines[i + 2])) {
            const sep = /[.:\-\u2013\u2014]$/.test(match.label) ? ' ' : '. ';
            found.push({ start: i, end: i + 1, match, title: `${match.label}${sep}${next}` });
        }
        else if (match.kind === 'chapter') {
            found.push({ start: i, end: i, match, title: match.label }); // `Chapter 5` directly above its text
        }
    }
    return found;
}
/**
 * Picks the level that splits the book: chapters/letters if any, else parts/books/volumes, else
 * bare roman numerals counting 1, 2, 3…; drops table-of-contents entries (listed again later).
 * Part lines above chapters are dropped from the text.
 */
function chooseHeadings(lines, candidates) {
    const of = (...kinds) => candidates.filter((c) => kinds.includes(c.match.kind));
    const dropLines = new Set();
    const drop = (hs) => hs.forEach((h) => {
        for (let i = h.start; i <= h.end; i++)
            dropLines.add(i);
    });
    let headings;
    if (of('chapter').length > 0) {
        headings = withoutContents(lines, of('chapter', 'named'), drop);
        drop(of('part'));
    }
    else if (of('part').length >= 2) {
        headings = withoutContents(lines, of('part', 'named'), drop);
    }
    else {
        const numerals = withoutContents(lines, of('numeral', 'named'), () => undefined);
        const numbers = numerals.filter((h) => h.match.kind === 'numeral').map((h) => h.match.number);
        if (numbers.length >= 2 && numbers.every((n, i) => n === i + 1)) {
            headings = withoutContents(lines, of('numeral', 'named'), drop);
        }
        else {
            headings = withoutContents(lines, of('named'), drop);
        }
    }
    return { headings, dropLines };
}
/** Removes headings that have no text under them and come again later (a contents list). */
function withoutContents(lines, headings, drop) {
    const dropped = [];
    const kept = headings.filter((h, j) => {
        const until = j + 1 < headings.length ? headings[j + 1].start : lines.length;
        const letters = (0, parsed_book_1.countLetters)(lines
            .slice(h.end + 1, until)
            .map((l) => l.text)
            .join(' '));
        const listedAgain = headings.slice(j + 1).some((later) => later.match.key === h.match.key);
        if (letters < MAX_TOC_ENTRY_LETTERS && listedAgain) {
            dropped.push(h);
            return false;
        }
        return true;
    });
    drop(dropped);
    return kept;
}
//# sourceMappingURL=text-parser.js.map