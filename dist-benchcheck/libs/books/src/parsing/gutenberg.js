"use strict";
/**
 * Normalises plain text and drops Project Gutenberg's licence header and footer, keeping only
 * what lies between the `*** START OF …` and `*** END OF …` markers.
 */
Object.defineProperty(exports, "__esModule", { value: true });
exports.normaliseNewlines = normaliseNewlines;
exports.stripGutenberg = stripGutenberg;
/** Strips a byte-order mark and turns \r\n and lone \r into \n. */
function normaliseNewlines(text) {
    return text.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n');
}
const START_MARKER = /^\s*\*{3}\s*START OF (THE|THIS) PROJECT GUTENBERG/i;
const END_MARKER = /^\s*\*{3}\s*END OF (THE|THIS) PROJECT GUTENBERG/i;
/** "End of Project Gutenberg's Alice's…", "End of the Project Gutenberg EBook of…" just before the END marker */
const END_LINE = /^\s*End of (the )?Project Gutenberg/i;
/** volunteer credits at the top of the body */
const CREDIT_PARAGRAPH = /^\s*(Produced by|E-?text prepared by|This e-?book was produced by|Transcribed from)\b/i;
/**
 * The lines between the markers (all of them when there are none), without the volunteers'
 * credits and the closing "End of Project Gutenberg's …" line. Generic over the line type so
 * PDF lines keep their pages.
 */
function stripGutenberg(lines, textOf = String) {
    const text = lines.map(textOf);
    const start = text.findIndex((l) => START_MARKER.test(l));
    const from = start + 1;
    let to = text.findIndex((l, i) => i >= from && END_MARKER.test(l));
    if (to < 0)
        to = text.length;
    if (start < 0 && to === text.length)
        return lines.slice();
    // the last lines before the END marker often restate it in prose
    for (let i = to - 1; i >= Math.max(from, to - 40); i--) {
        if (END_LINE.test(text[i])) {
            to = i;
            break;
        }
    }
    const [creditFrom, creditTo] = creditParagraph(text, from, to);
    return lines.filter((_, i) => i >= from && i < to && (i < creditFrom || i >= creditTo));
}
/** The [from, to) lines of a "Produced by …" paragraph among the first lines of the body, if any. */
function creditParagraph(text, from, to) {
    const limit = Math.min(to, from + 80);
    for (let i = from; i < limit; i++) {
        if (!CREDIT_PARAGRAPH.test(text[i]) || (i > from && text[i - 1].trim() !== ''))
            continue;
        let j = i;
        while (j < to && text[j].trim() !== '')
            j++;
        return [i, j];
    }
    return [-1, -1];
}
//# sourceMappingURL=gutenberg.js.map