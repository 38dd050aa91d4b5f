import { wordForms } from './word-forms';

/*
 * Retrieval in one SQL statement over book_chunks (text + generated tsvector, GIN-indexed) and
 * book_terms (each book's vocabulary with document frequencies, trigram-indexed):
 *
 * 1. The question's english stems (stopwords drop out); irregular verb forms count as the word
 *    (said for say); a word the book lacks is matched to the book's closest spellings by
 *    trigram similarity (a misspelt name: Cheshre → cheshir).
 * 2. Every word is OR-combined, so a passage missing one word still counts, and weighted by
 *    its rarity in this book (BM25: IDF × saturated term frequency, the frequency counted with
 *    ts_rank_cd over the passage's tsvector, normalised by passage length).
 * 3. Two ranked signals — full text (the exact words) and trigram (close spellings weighted by
 *    their similarity) — are blended; a passage also earns a share of its better neighbour's
 *    score, as narrative refers back ("the poor little thing" is the baby of the passage before).
 * 4. Scores are divided by the most a passage could reach (every word present, at saturation),
 *    so they lie in 0..1 and say how much of the question a passage covers.
 *
 * Only chapters up to the reading position take part, neighbours included. In a long book the
 * full scoring runs on the passages a cheaper first pass ranks highest.
 */

/** The knobs of SEARCH_SQL; the benchmark (bench/retrieval.ts) measures what they do. */
export const SEARCH_TUNING = {
  /** BM25 term-frequency saturation and length normalisation */
  k1: 1.2,
  b: 0.75,
  /** weights of the full-text (exact words) and trigram (close spellings) scores in the blend */
  fullTextWeight: 0.7,
  trigramWeight: 0.3,
  /** least trigram similarity for a word of the book to stand in for a query word it lacks */
  fuzzyTermSimilarity: 0.5,
  /** share of the better neighbouring passage's score a passage adds to its own */
  neighbourWeight: 0.3,
  /** passages scored in full (the rest of a long book is ranked out by a cheaper first pass) */
  candidates: 400,
};

/** The parameters of SEARCH_SQL, in order. */
export function searchParams(
  bookId: string,
  query: string,
  maxChapter: number | null,
  k: number,
  t = SEARCH_TUNING,
): unknown[] {
  const forms = wordForms(query);
  return [
    bookId,
    query,
    maxChapter,
    k,
    t.k1,
    t.b,
    t.fullTextWeight,
    t.trigramWeight,
    t.fuzzyTermSimilarity,
    t.neighbourWeight,
    t.candidates,
    forms.map(([word]) => word),
    forms.map(([, form]) => form),
  ];
}

/*
 * $1 book id, $2 query text, $3 max chapter (null = all), $4 k, $5 BM25 k1, $6 BM25 b,
 * $7 full-text weight, $8 trigram weight, $9 least trigram similarity, $10 neighbour weight,
 * $11 candidates scored in full, $12/$13 the question's irregular verb forms as parallel arrays
 * (word, other form).
 *
 * Every score is scaled by the best a passage could reach (each query word present, at BM25's
 * saturation), so scores lie in 0..1 and say how much of the question a passage covers.
 */
export const SEARCH_SQL = `
WITH book AS (
  SELECT greatest(chunk_count, 1)::float8 AS n, greatest(avg_chunk_bytes, 1)::float8 AS avglen
  FROM books WHERE id = $1
),
-- the question's english stems (stopwords drop out; "tea-time" gives tea, time and tea-tim)
content AS (
  SELECT DISTINCT stem FROM unnest(tsvector_to_array(to_tsvector('english'::regconfig, $2::text))) AS stem
),
-- other forms of the question's irregular verbs, which count as the word itself (said for say)
forms AS (
  SELECT DISTINCT x.stem, x.form
  FROM (
    SELECT (tsvector_to_array(to_tsvector('english'::regconfig, v.word)))[1] AS stem,
           (tsvector_to_array(to_tsvector('english'::regconfig, v.form)))[1] AS form
    FROM unnest($12::text[], $13::text[]) AS v(word, form)
  ) x
  JOIN content c ON c.stem = x.stem
  WHERE x.form IS NOT NULL AND x.form <> x.stem
),
-- the question's words (of four letters or more) that the book does not have
unknown AS MATERIALIZED (
  SELECT c.stem FROM content c
  WHERE length(c.stem) >= 4 AND NOT EXISTS (SELECT 1 FROM book_terms t WHERE t.book_id = $1 AND t.lexeme = c.stem)
),
-- the book's words each query stem stands for: itself and its other forms (similarity 1), and,
-- when the book lacks the word (a misspelt name, a form the stemmer keeps apart), its closest
-- spellings in the book's vocabulary by trigram similarity
vocab AS (
  SELECT c.stem, t.lexeme, t.ndoc, 1::float8 AS sim
  FROM content c JOIN book_terms t ON t.book_id = $1 AND t.lexeme = c.stem
  UNION ALL
  SELECT f.stem, t.lexeme, t.ndoc, 1::float8 AS sim
  FROM forms f JOIN book_terms t ON t.book_id = $1 AND t.lexeme = f.form
  UNION ALL
  SELECT u.stem, f.lexeme, f.ndoc, f.sim
  FROM unknown u
  CROSS JOIN LATERAL (
    SELECT t.lexeme, t.ndoc, similarity(t.lexeme, u.stem)::float8 AS sim
    FROM book_terms t
    WHERE t.book_id = $1 AND t.lexeme % u.stem
    ORDER BY sim DESC, t.ndoc DESC
    LIMIT 2
  ) f
  WHERE f.sim >= $9::float8
),
-- BM25's inverse document frequency per lexeme, and the lexeme as a one-word tsquery
terms AS (
  SELECT v.lexeme, ln(1 + (b.n - v.ndoc + 0.5) / (v.ndoc + 0.5)) AS idf,
         ('''' || replace(replace(v.lexeme, '\\', '\\\\'), '''', '''''') || '''')::tsquery AS q
  FROM (SELECT DISTINCT lexeme, ndoc FROM vocab) v CROSS JOIN book b
),
-- the most a passage can score: every query stem matched, at saturation (k1 + 1)
ceiling AS (
  SELECT greatest(sum(best) * ($5::float8 + 1), 1e-9) AS total
  FROM (SELECT v.stem, max(v.sim * t.idf) AS best FROM vocab v JOIN terms t USING (lexeme) GROUP BY v.stem) x
),
-- the passages that contain any of the words (GIN index on tsv)
matches AS (
  SELECT c.id, t.lexeme
  FROM book_chunks c JOIN terms t ON c.tsv @@ t.q
  WHERE c.book_id = $1 AND ($3::int IS NULL OR c.chapter_index <= $3)
),
-- in a long book, only the most promising of them are scored in full: those holding the most
-- (and rarest) of the question's words, as BM25 would rank them with every frequency at 1
candidates AS MATERIALIZED (
  SELECT id FROM (
    SELECT m.id, v.stem, max(v.sim * t.idf) AS weight
    FROM matches m JOIN vocab v ON v.lexeme = m.lexeme JOIN terms t ON t.lexeme = m.lexeme
    GROUP BY m.id, v.stem
  ) x
  GROUP BY id
  ORDER BY sum(weight) DESC, id
  LIMIT $11::int
),
-- BM25's saturated term frequency for those (ts_rank_cd of a one-word query with unit weights
-- counts its occurrences; octet_length reads the stored size without decompressing the text)
occurrences AS (
  SELECT c.id, c.ordinal, c.chapter_index, t.lexeme, t.idf,
         o.n * ($5::float8 + 1) / (o.n + $5::float8 * (1 - $6::float8 + $6::float8 * octet_length(c.text) / b.avglen)) AS tf
  FROM candidates cd
  JOIN book_chunks c ON c.id = cd.id
  JOIN terms t ON c.tsv @@ t.q
  CROSS JOIN book b
  CROSS JOIN LATERAL (SELECT ts_rank_cd('{1,1,1,1}', c.tsv, t.q)::float8 AS n) o
),
-- per passage and query stem: the exact word's BM25 (full text) and the best of its spellings
-- weighted by their trigram similarity (trigram; the same as full text when nothing is misspelt)
per_stem AS (
  SELECT o.id, o.ordinal, o.chapter_index, v.stem,
         max(CASE WHEN v.sim = 1 THEN o.idf * o.tf ELSE 0 END) AS full_text,
         max(v.sim * o.idf * o.tf) AS trigram
  FROM occurrences o JOIN vocab v ON v.lexeme = o.lexeme
  GROUP BY o.id, o.ordinal, o.chapter_index, v.stem
),
scored AS (
  SELECT p.id, p.ordinal, p.chapter_index,
         ($7::float8 * sum(p.full_text) + $8::float8 * sum(p.trigram)) / (($7::float8 + $8::float8) * ceiling.total) AS score
  FROM per_stem p CROSS JOIN ceiling
  GROUP BY p.id, p.ordinal, p.chapter_index, ceiling.total
),
-- a passage shares in the better of its neighbours' scores in the same chapter (neighbours the
-- search may not see have none)
smoothed AS (
  SELECT id, ordinal,
         (score + $10::float8 * greatest(
            CASE WHEN lag(ordinal) OVER w = ordinal - 1 AND lag(chapter_index) OVER w = chapter_index
                 THEN lag(score) OVER w ELSE 0 END,
            CASE WHEN lead(ordinal) OVER w = ordinal + 1 AND lead(chapter_index) OVER w = chapter_index
                 THEN lead(score) OVER w ELSE 0 END
         )) / (1 + $10::float8) AS final
  FROM scored
  WINDOW w AS (ORDER BY ordinal)
  ORDER BY final DESC, ordinal
  LIMIT $4::int
)
SELECT c.id, c.chapter, c.chapter_index, c.section, c.page, c.text, least(s.final, 1)::float8 AS score
FROM smoothed s JOIN book_chunks c ON c.id = s.id
ORDER BY s.final DESC, s.ordinal
`;
