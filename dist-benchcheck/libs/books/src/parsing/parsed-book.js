"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.FRONT_MATTER_TITLE = exports.MIN_FRONT_MATTER_LETTERS = void 0;
exports.countLetters = countLetters;
exports.toParagraphs = toParagraphs;
exports.joinLines = joinLines;
/** Text before the first heading is kept as a chapter only when it holds at least this many letters. */
exports.MIN_FRONT_MATTER_LETTERS = 500;
exports.FRONT_MATTER_TITLE = 'Front matter';
function countLetters(s) {
    const m = s.match(/\p{L}/gu);
    return m ? m.length : 0;
}
/** Splits lines into paragraphs at blank lines; joins a paragraph's lines with single spaces. */
function toParagraphs(lines, section = null, dehyphenate = false) {
    const out = [];
    let buf = [];
    let page = null;
    const flush = () => {
        const text = joinLines(buf, dehyphenate);
        if (text)
            out.push({ text, page, section });
        buf = [];
    };
    for (const line of lines) {
        if (line.text.trim() === '') {
            flush();
            continue;
        }
        if (buf.length === 0)
            page = line.page;
        buf.push(line.text);
    }
    flush();
    return out;
}
/**
 * Joins wrapped lines with single spaces. With `dehyphenate` (typeset text such as PDF), a word
 * hyphenated across a line break ("exam-" + "ple") is rejoined; plain text keeps "rabbit-" + "hole".
 */
function joinLines(lines, dehyphenate = false) {
    let text = '';
    for (const raw of lines) {
        const line = raw.trim();
        if (!line)
            continue;
        if (!text)
            text = line;
        else if (dehyphenate && /\p{Ll}-$/u.test(text) && /^\p{Ll}/u.test(line) && !/--$/.test(text))
            text = text.slice(0, -1) + line;
        else
            text += ' ' + line;
    }
    return text.replace(/[ \t\u00a0]{2,}/g, ' ');
}
//# sourceMappingURL=parsed-book.js.map