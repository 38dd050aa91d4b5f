-- Up Migration

-- Webhooks (docs/webhooks.md). An endpoint is a reader's URL with the kinds it wants and the
-- secret its deliveries are signed with (Standard Webhooks); one that kept failing is disabled
-- (disabled_at), kept and listed until its reader deletes it.
CREATE TABLE webhook_endpoints (
  id              uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
  owner_id        text        NOT NULL,
  url             text        NOT NULL,
  events          text[]      NOT NULL CHECK (cardinality(events) > 0),
  secret          text        NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  disabled_at     timestamptz,
  disabled_reason text
);
CREATE INDEX webhook_endpoints_owner ON webhook_endpoints (owner_id, created_at);

-- The outbox: a delivery per endpoint and message, written in the transaction that moves the
-- webhooks consumer's checkpoint over the event (or that makes a book ready), deleted once the
-- receiver answered 2xx. message_id is the webhook-id, the same at every try and replay.
-- What it tells of is gone with it: an erased conversation's events, an erased book.
CREATE TABLE webhook_deliveries (
  id              bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  endpoint_id     uuid        NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  message_id      text        NOT NULL,
  type            text        NOT NULL,
  payload         jsonb       NOT NULL,
  event_id        uuid        REFERENCES events (event_id) ON DELETE CASCADE,
  book_id         uuid        REFERENCES books (id) ON DELETE CASCADE,
  attempts        integer     NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  last_error      text,
  created_at      timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT webhook_deliveries_once UNIQUE (endpoint_id, message_id)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at);
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id) WHERE event_id IS NOT NULL;
CREATE INDEX webhook_deliveries_book ON webhook_deliveries (book_id) WHERE book_id IS NOT NULL;

-- book.ready: books are rows, not events, so the outbox row is written by the statement that
-- makes a book ready (an ingest's last step, or a book stored ready at once), in its transaction.
CREATE FUNCTION webhook_book_ready() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO webhook_deliveries (endpoint_id, message_id, type, payload, book_id)
  SELECT e.id, 'msg_' || md5('book.ready/' || NEW.id::text)::uuid::text, 'book.ready',
         jsonb_build_object(
           'type', 'book.ready',
           'timestamp', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
           'data', jsonb_build_object('bookId', NEW.id, 'title', NEW.title)),
         NEW.id
    FROM webhook_endpoints e
   WHERE e.owner_id = NEW.owner_id AND e.disabled_at IS NULL AND 'book.ready' = ANY (e.events)
  ON CONFLICT DO NOTHING;
  RETURN NULL;
END $$;
CREATE TRIGGER books_ready_webhooks AFTER UPDATE OF status ON books
  FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM 'ready' AND NEW.status = 'ready')
  EXECUTE FUNCTION webhook_book_ready();
CREATE TRIGGER books_stored_ready_webhooks AFTER INSERT ON books
  FOR EACH ROW WHEN (NEW.status = 'ready')
  EXECUTE FUNCTION webhook_book_ready();

-- Down Migration
DROP TRIGGER books_stored_ready_webhooks ON books;
DROP TRIGGER books_ready_webhooks ON books;
DROP FUNCTION webhook_book_ready();
DROP TABLE webhook_deliveries;
DROP TABLE webhook_endpoints;
