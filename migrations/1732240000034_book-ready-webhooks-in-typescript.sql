-- Up Migration

-- book.ready (docs/webhooks.md): its message is built in TypeScript (libs/webhooks,
-- WebhookOutbox.relayReadyBooks), no longer in SQL. Books are rows, not events, so the statement
-- that makes a book ready still notes it, in its transaction, as the trigger of migration 027 did:
-- now only which book and when, for the owners with an enabled book.ready endpoint. A worker's
-- sender turns each note into deliveries and deletes it, in one transaction. The triggers stay
-- (this replaces their function), so a book that a worker of the release before makes ready during
-- a rolling upgrade is noted as well. Deliveries the old function wrote are rows of
-- webhook_deliveries with their payload, sent as before.
CREATE TABLE webhook_books_ready (
  book_id  uuid        PRIMARY KEY REFERENCES books (id) ON DELETE CASCADE,
  ready_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_books_ready_at ON webhook_books_ready (ready_at);

CREATE OR REPLACE FUNCTION webhook_book_ready() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO webhook_books_ready (book_id)
  SELECT NEW.id
   WHERE EXISTS (SELECT 1 FROM webhook_endpoints e
                  WHERE e.owner_id = NEW.owner_id AND e.disabled_at IS NULL AND 'book.ready' = ANY (e.events))
  ON CONFLICT DO NOTHING;
  RETURN NULL;
END $$;

-- Down Migration
CREATE OR REPLACE FUNCTION webhook_book_ready() RETURNS trigger LANGUAGE plpgsql AS $$
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
DROP TABLE webhook_books_ready;
