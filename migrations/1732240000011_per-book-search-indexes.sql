-- Up Migration

-- Search always reads one book, but book_chunks_tsv and book_terms_trgm index every book's rows:
-- in a large library the planner either scans the whole library's posting lists and drops other
-- books' rows afterwards, or reads the book's rows by (book_id, ordinal) and tests each one.
-- btree_gin lets one GIN index key on book_id beside the tsvector (and beside the lexeme's
-- trigrams), so a lookup reads only the book's entries. Both indexes also serve queries on the
-- second column alone, so they replace the library-wide ones.
CREATE EXTENSION IF NOT EXISTS btree_gin;

CREATE INDEX book_chunks_book_tsv ON book_chunks USING gin (book_id, tsv);
DROP INDEX book_chunks_tsv;

CREATE INDEX book_terms_book_trgm ON book_terms USING gin (book_id, lexeme gin_trgm_ops);
DROP INDEX book_terms_trgm;

-- Down Migration
CREATE INDEX book_terms_trgm ON book_terms USING gin (lexeme gin_trgm_ops);
DROP INDEX book_terms_book_trgm;
CREATE INDEX book_chunks_tsv ON book_chunks USING gin (tsv);
DROP INDEX book_chunks_book_tsv;
