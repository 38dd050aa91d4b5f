-- Up Migration

-- Books ingest in the background (the book-ingest queue): the API stores the upload and answers
-- 202, a worker parses it in a bounded child process. A book that cannot be read ends 'failed'
-- with its error; its upload and any chunks are deleted, only the row stays to say why.
ALTER TABLE books DROP CONSTRAINT books_status_check;
ALTER TABLE books ADD CONSTRAINT books_status_check CHECK (status IN ('ingesting', 'ready', 'failed'));
-- {phase, bytesTotal, pagesDone?, pagesTotal?, chunksWritten, chunksTotal?}
ALTER TABLE books ADD COLUMN progress jsonb NOT NULL DEFAULT '{}';
-- {code, message} when failed
ALTER TABLE books ADD COLUMN error jsonb;
-- the per-user cap on ingestions in flight counts these
CREATE INDEX books_ingesting_owner ON books (owner_id) WHERE status = 'ingesting';

-- The uploaded bytes until the worker has read them; deleted with the book or once it is ready.
CREATE TABLE book_uploads (
  book_id uuid  PRIMARY KEY REFERENCES books (id) ON DELETE CASCADE,
  content bytea NOT NULL
);
-- PDFs are compressed already and text is read once: skip TOAST compression
ALTER TABLE book_uploads ALTER COLUMN content SET STORAGE EXTERNAL;

-- Down Migration
DROP TABLE book_uploads;
DROP INDEX books_ingesting_owner;
ALTER TABLE books DROP COLUMN error;
ALTER TABLE books DROP COLUMN progress;
DELETE FROM books WHERE status = 'failed';
ALTER TABLE books DROP CONSTRAINT books_status_check;
ALTER TABLE books ADD CONSTRAINT books_status_check CHECK (status IN ('ingesting', 'ready'));
