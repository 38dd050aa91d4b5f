-- Up Migration

-- Erasure (docs/erasure.md): the one sanctioned removal from the log. The event store's
-- eraseStream deletes a stream's events in the transaction that appends its tombstone, having
-- named the stream in `parley.erasing_stream`; every other delete, and every update, is refused
-- as before. Row-level for deletes only, so appends pay nothing for it.
DROP TRIGGER events_no_update ON events;
CREATE TRIGGER events_no_update BEFORE UPDATE ON events
  FOR EACH STATEMENT EXECUTE FUNCTION events_append_only();
CREATE TRIGGER events_erasure_only BEFORE DELETE ON events
  FOR EACH ROW WHEN (current_setting('parley.erasing_stream', true) IS DISTINCT FROM OLD.stream_id)
  EXECUTE FUNCTION events_append_only();

-- Who asked for what to be erased and what it removed: content-free, kept for good.
CREATE TABLE erasures (
  id             uuid        PRIMARY KEY,
  subject        text        NOT NULL CHECK (subject IN ('conversation', 'book', 'account')),
  subject_id     text        NOT NULL,
  requested_by   text,
  requested_at   timestamptz NOT NULL DEFAULT now(),
  completed_at   timestamptz,
  streams_erased integer     NOT NULL DEFAULT 0,
  events_erased  integer     NOT NULL DEFAULT 0
);
CREATE INDEX erasures_unfinished ON erasures (requested_at) WHERE completed_at IS NULL;

-- BullMQ jobs that held an erased conversation's data and are still to be removed from Redis
-- (a running job cannot be removed until it ends): the erasure sweep retries them.
CREATE TABLE erasure_pending_jobs (
  queue    text        NOT NULL,
  job_id   text        NOT NULL,
  since    timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (queue, job_id)
);

-- The conversations that ever had a book as a source, and those of an owner, found in the log
-- (the read model may lag behind a conversation started a moment ago).
CREATE INDEX events_conversation_book_ids ON events USING gin ((data -> 'bookIds'))
  WHERE type IN ('ConversationStarted', 'SourcesChanged');
CREATE INDEX events_conversation_book_id ON events ((data ->> 'bookId'))
  WHERE type = 'ConversationStarted';
CREATE INDEX events_conversation_owner ON events ((data ->> 'ownerId'))
  WHERE type = 'ConversationStarted';

-- Streams that ended deleted or erased (the projection's guard of a start, the sweep's late
-- snapshots): few rows, as the older index for deletions alone.
CREATE INDEX events_conversation_ended ON events (stream_id)
  WHERE type IN ('ConversationDeleted', 'ConversationErased');

-- The usage records become a ledger of money spent: no longer deleted with their conversation
-- (nor by a rebuild of the read models), and each names the reader who spent it, so the
-- reader's usage no longer depends on the conversation still existing. An erased account's
-- records lose the reader (owner_id NULL) and keep the money. A line is keyed by the event it
-- records: a call paid for while its conversation was being erased is recorded with the id its
-- event would have had, and no version (the stream has none left for it).
ALTER TABLE usage_records ADD COLUMN owner_id text;
UPDATE usage_records u SET owner_id = c.owner_id FROM conversations c WHERE c.id = u.conversation_id;
ALTER TABLE usage_records DROP CONSTRAINT usage_records_conversation_id_fkey;
ALTER TABLE usage_records ADD COLUMN event_id uuid;
UPDATE usage_records u SET event_id = e.event_id
  FROM events e WHERE e.stream_id = 'conversation-' || u.conversation_id::text AND e.version = u.version;
UPDATE usage_records SET event_id = gen_random_uuid() WHERE event_id IS NULL;
ALTER TABLE usage_records DROP CONSTRAINT usage_records_pkey;
ALTER TABLE usage_records ALTER COLUMN version DROP NOT NULL, ALTER COLUMN event_id SET NOT NULL;
ALTER TABLE usage_records ADD PRIMARY KEY (event_id);
CREATE INDEX usage_records_conversation_turn ON usage_records (conversation_id, turn_id);
CREATE INDEX usage_records_owner_at ON usage_records (owner_id, at);

-- Down Migration
DROP INDEX usage_records_owner_at;
DROP INDEX usage_records_conversation_turn;
DELETE FROM usage_records WHERE version IS NULL;
ALTER TABLE usage_records DROP CONSTRAINT usage_records_pkey;
ALTER TABLE usage_records DROP COLUMN event_id;
ALTER TABLE usage_records ALTER COLUMN version SET NOT NULL;
ALTER TABLE usage_records ADD PRIMARY KEY (conversation_id, version);
ALTER TABLE usage_records DROP COLUMN owner_id;
DROP INDEX events_conversation_ended;
DROP INDEX events_conversation_owner;
DROP INDEX events_conversation_book_id;
DROP INDEX events_conversation_book_ids;
DROP TABLE erasure_pending_jobs;
DROP TABLE erasures;
DROP TRIGGER events_erasure_only ON events;
DROP TRIGGER events_no_update ON events;
CREATE TRIGGER events_no_update BEFORE UPDATE OR DELETE ON events
  FOR EACH STATEMENT EXECUTE FUNCTION events_append_only();
