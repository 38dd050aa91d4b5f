import { MAX_QUERY_CHARS, queryText } from './query-text';

describe(queryText.name, () => {
  it('straightens apostrophes and collapses whitespace', () => {
    expect(queryText('  What did the Duchess\u2019s\n\tbaby  turn into? ')).toBe(
      "What did the Duchess's baby turn into?",
    );
  });

  it('is empty without a letter or digit, and cut at the limit', () => {
    expect(queryText('?!… -- ')).toBe('');
    expect(queryText('x'.repeat(MAX_QUERY_CHARS + 10))).toHaveLength(MAX_QUERY_CHARS);
  });
});
