"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.MAX_QUERY_CHARS = void 0;
exports.queryText = queryText;
/** The longest question search reads; the rest is ignored. */
exports.MAX_QUERY_CHARS = 1_000;
/**
 * A reader's question as search reads it: Unicode-normalised, curly apostrophes made straight
 * (so "Duchess’s" stems like "Duchess's"), whitespace collapsed, cut at MAX_QUERY_CHARS. Stopwords
 * stay: Postgres's english dictionary drops them, and a word common in the book weighs little by
 * its IDF. Empty when the question has no letter or digit.
 */
function queryText(query) {
    const text = query
        .normalize('NFKC')
        .replace(/[\u2018\u2019\u02bc`]/g, "'")
        .replace(/\s+/g, ' ')
        .trim()
        .slice(0, exports.MAX_QUERY_CHARS);
    return /[\p{L}\p{N}]/u.test(text) ? text : '';
}
//# sourceMappingURL=query-text.js.map