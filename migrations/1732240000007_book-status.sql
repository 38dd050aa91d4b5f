-- Up Migration

-- A book is stored in short batches, each its own transaction, because one long transaction
-- would hold back every tailer of the event log (they read below the oldest open transaction).
-- It stays 'ingesting', neither listed nor searchable, until its last batch is in.
ALTER TABLE books ADD COLUMN status text NOT NULL DEFAULT 'ready' CHECK (status IN ('ingesting', 'ready'));
CREATE INDEX books_ingesting ON books (created_at) WHERE status = 'ingesting';

-- Down Migration
DROP INDEX books_ingesting;
ALTER TABLE books DROP COLUMN status;
