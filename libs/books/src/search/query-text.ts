/** The longest question search reads; the rest is ignored. */
export const MAX_QUERY_CHARS = 1_000;

/**
 * A reader's question as search reads it: Unicode-normalised, curly apostrophes made straight
 * (so "Duchess’s" stems like "Duchess's"), whitespace collapsed, cut at MAX_QUERY_CHARS. Stopwords
 * stay: Postgres's english dictionary drops them, and a word common in the book weighs little by
 * its IDF. Empty when the question has no letter or digit.
 */
export function queryText(query: string): string {
  const text = query
    .normalize('NFKC')
    .replace(/[\u2018\u2019\u02bc`]/g, "'")
    // eslint-disable-next-line no-control-regex -- matching control characters is the point
    .replace(/[\u0000-\u001f\u007f]/g, ' ') // Postgres text cannot hold NUL
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, MAX_QUERY_CHARS);
  return /[\p{L}\p{N}]/u.test(text) ? text : '';
}
