-- Up Migration

-- Finds a book's conversations in the log itself (not the lagging read model) when the book is deleted.
CREATE INDEX events_conversation_book ON events ((data->>'bookId'))
  WHERE type = 'ConversationStarted';

-- Down Migration
DROP INDEX events_conversation_book;
