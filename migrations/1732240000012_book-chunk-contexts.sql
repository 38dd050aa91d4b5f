-- Up Migration

-- Contextual retrieval (opt-in, CONTEXTUAL_RETRIEVAL=on): a model writes a sentence or two that
-- situates each passage in its book (who speaks, which chapter, which events), stored beside the
-- passage. The context is indexed with the passage (full text here; embeddings embed it too) but
-- never shown: search still returns and cites `text` alone.
ALTER TABLE book_chunks ADD COLUMN context text;

-- tsv now covers the context as well. Postgres 15 cannot change a generated column's expression,
-- so the column (and its index) is made again; this rewrites book_chunks once.
ALTER TABLE book_chunks DROP COLUMN tsv;
ALTER TABLE book_chunks ADD COLUMN tsv tsvector
  GENERATED ALWAYS AS (to_tsvector('english'::regconfig, coalesce(context || ' ', '') || text)) STORED;
CREATE INDEX book_chunks_book_tsv ON book_chunks USING gin (book_id, tsv);

-- Where a book's contextualisation stands, for the operator: {status, model, estimate, usage,
-- done, total, error}. The estimate is written before the first call, the usage as calls return.
ALTER TABLE books ADD COLUMN contextualization jsonb;

-- Down Migration
ALTER TABLE books DROP COLUMN contextualization;
ALTER TABLE book_chunks DROP COLUMN tsv;
ALTER TABLE book_chunks DROP COLUMN context;
ALTER TABLE book_chunks ADD COLUMN tsv tsvector GENERATED ALWAYS AS (to_tsvector('english'::regconfig, text)) STORED;
CREATE INDEX book_chunks_book_tsv ON book_chunks USING gin (book_id, tsv);
