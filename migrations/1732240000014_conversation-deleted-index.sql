-- Up Migration

-- The sweeper asks, for each recent post, whether its conversation was deleted. Without an index
-- that question scanned every event of the conversation (the stream's version index, filtered by
-- type), so a sweep cost posts in the window × events per conversation: it grew with the square of
-- the traffic, and in a 60-minute soak at 10 turns/s it took minutes by minute 37 and ran in two
-- workers at once, taking a core from the turns. Deletions are rare: a small partial index.
CREATE INDEX events_conversation_deleted ON events (stream_id)
  WHERE type = 'ConversationDeleted';

-- Down Migration
DROP INDEX events_conversation_deleted;
