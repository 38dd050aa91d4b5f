-- Up Migration

-- Trigram similarity (pg_trgm) finds names and misspelt words that full-text search misses.
CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- A book belongs to its uploader (owner_id = the JWT sub); chapters are [{index, title}], 1..N.
CREATE TABLE books (
  id              uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
  owner_id        text        NOT NULL,
  title           text        NOT NULL,
  author          text,
  format          text        NOT NULL CHECK (format IN ('text', 'markdown', 'pdf')),
  chapters        jsonb       NOT NULL,
  chunk_count     integer     NOT NULL CHECK (chunk_count >= 0),
  -- average chunk size in bytes, for BM25's length normalisation
  avg_chunk_bytes real        NOT NULL,
  size_bytes      integer     NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX books_owner ON books (owner_id, created_at DESC, id DESC);

-- Passages in reading order; tsv is derived by Postgres from the text, so it cannot drift.
CREATE TABLE book_chunks (
  id            uuid    PRIMARY KEY DEFAULT gen_random_uuid(),
  book_id       uuid    NOT NULL REFERENCES books (id) ON DELETE CASCADE,
  ordinal       integer NOT NULL,
  chapter_index integer NOT NULL,
  chapter       text    NOT NULL,
  section       text,
  page          integer,
  text          text    NOT NULL,
  tsv           tsvector GENERATED ALWAYS AS (to_tsvector('english'::regconfig, text)) STORED,
  CONSTRAINT book_chunks_ordinal UNIQUE (book_id, ordinal)
);
CREATE INDEX book_chunks_tsv ON book_chunks USING gin (tsv);

-- Each book's vocabulary: the stemmed words of its chunks and in how many chunks each occurs.
-- Gives search the rarity of a word (IDF) and, by trigram similarity, the words of the book a
-- misspelt or differently inflected query word may have meant.
CREATE TABLE book_terms (
  book_id uuid    NOT NULL REFERENCES books (id) ON DELETE CASCADE,
  lexeme  text    NOT NULL,
  ndoc    integer NOT NULL,
  PRIMARY KEY (book_id, lexeme)
);
CREATE INDEX book_terms_trgm ON book_terms USING gin (lexeme gin_trgm_ops);

-- Down Migration
DROP TABLE book_terms;
DROP TABLE book_chunks;
DROP TABLE books;
