-- Up Migration

-- The read-model projection reads a turn's tool calls from the log when it does not hold them
-- (after a lost checkpoint race, a restart, a rebuild): by conversation and turn, like the turn
-- endings above. Without it each such read scanned, and unpacked the data of, every event of the
-- conversation, so it cost more with every turn (a 60-minute soak found it at the top of
-- Postgres's CPU, in parallel plans, by minute 50).
CREATE INDEX events_tool_calls ON events (stream_id, (data->>'turnId'))
  WHERE type = 'ToolInvoked';

-- Down Migration
DROP INDEX events_tool_calls;
