-- Up Migration

-- The append-only event log. `position` is the global order; `transaction_id` is the writing
-- transaction (xid8), so tailers can read only below the oldest in-flight transaction and never
-- skip an event whose transaction commits after a later-positioned one.
CREATE TABLE events (
  position       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  event_id       uuid        NOT NULL UNIQUE,
  stream_id      text        NOT NULL,
  version        integer     NOT NULL CHECK (version > 0),
  type           text        NOT NULL,
  data           jsonb       NOT NULL,
  metadata       jsonb       NOT NULL DEFAULT '{}',
  transaction_id xid8        NOT NULL DEFAULT pg_current_xact_id(),
  occurred_at    timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT events_stream_version UNIQUE (stream_id, version)
);
CREATE INDEX events_tailing ON events (transaction_id, position);

-- Append-only: updates and deletes are refused by the schema itself.
CREATE FUNCTION events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'events is append-only';
END $$;
CREATE TRIGGER events_no_update BEFORE UPDATE OR DELETE ON events
  FOR EACH STATEMENT EXECUTE FUNCTION events_append_only();

-- Where each consumer of the global log has got to, as the (transaction id, position) pair.
CREATE TABLE consumer_checkpoints (
  consumer       text        PRIMARY KEY,
  transaction_id xid8        NOT NULL DEFAULT '0',
  position       bigint      NOT NULL DEFAULT 0,
  updated_at     timestamptz NOT NULL DEFAULT now()
);

-- Events a consumer gave up on after bounded retries, so one bad event cannot stall the rest.
CREATE TABLE consumer_dead_letters (
  consumer   text        NOT NULL,
  event_id   uuid        NOT NULL,
  position   bigint      NOT NULL,
  attempts   integer     NOT NULL,
  error      text        NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (consumer, event_id)
);

-- Down Migration
DROP TABLE consumer_dead_letters;
DROP TABLE consumer_checkpoints;
DROP TABLE events;
DROP FUNCTION events_append_only();
