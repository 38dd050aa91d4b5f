-- Up Migration

-- Semantic retrieval beside full text: one vector per passage and embeddings model. The model
-- is part of the key, so a change of model is re-embedded beside the old vectors (search uses
-- only rows of the configured model) and the old rows are dropped once the new ones are in.
-- No pgvector here: a vector is float32 little-endian in a bytea, unit length, compared by an
-- exact dot product in Node over the one book's rows (docs/operations.md, "Semantic search").
-- With pgvector on the server, `embedding vector(N)` and an HNSW index
-- (USING hnsw (embedding vector_cosine_ops)) would replace the bytea and the scan.
CREATE TABLE book_chunk_embeddings (
  book_id       uuid    NOT NULL REFERENCES books (id) ON DELETE CASCADE,
  model         text    NOT NULL,
  chunk_id      uuid    NOT NULL REFERENCES book_chunks (id) ON DELETE CASCADE,
  -- copied from the chunk so the reading position filters without a join
  chapter_index integer NOT NULL,
  embedding     bytea   NOT NULL,
  PRIMARY KEY (book_id, model, chunk_id)
);
CREATE INDEX book_chunk_embeddings_chunk ON book_chunk_embeddings (chunk_id);
-- vectors are incompressible: skip TOAST's attempt
ALTER TABLE book_chunk_embeddings ALTER COLUMN embedding SET STORAGE EXTERNAL;

-- Where a book's vectors stand: null (never embedded: embeddings off), 'embedding', 'ready' or
-- 'failed' (the book stays searchable by full text), and the model they are of.
ALTER TABLE books ADD COLUMN embedding_status text CHECK (embedding_status IN ('embedding', 'ready', 'failed'));
ALTER TABLE books ADD COLUMN embedding_model text;

-- Down Migration
ALTER TABLE books DROP COLUMN embedding_model;
ALTER TABLE books DROP COLUMN embedding_status;
DROP TABLE book_chunk_embeddings;
