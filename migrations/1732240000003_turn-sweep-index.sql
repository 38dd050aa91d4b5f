-- Up Migration

-- Lets the worker's sweeper find turns that have no ending yet (after Redis lost its queue).
CREATE INDEX events_turn_endings ON events (stream_id, (data->>'turnId'))
  WHERE type IN ('AssistantReplied', 'TurnFailed', 'TurnCancelled');
CREATE INDEX events_posted_recent ON events (occurred_at)
  WHERE type = 'UserMessagePosted';

-- Down Migration
DROP INDEX events_posted_recent;
DROP INDEX events_turn_endings;
