-- Up Migration

-- A conversation can have several books (ConversationStarted.bookIds, SourcesChanged): the list
-- read model keeps them all, `book_id` stays the first. GET /v1/conversations?bookId= matches any.
ALTER TABLE conversations ADD COLUMN book_ids uuid[] NOT NULL DEFAULT '{}';
UPDATE conversations SET book_ids = ARRAY[book_id] WHERE book_id IS NOT NULL;
CREATE INDEX conversations_book_ids ON conversations USING gin (book_ids);

-- Down Migration
DROP INDEX conversations_book_ids;
ALTER TABLE conversations DROP COLUMN book_ids;
