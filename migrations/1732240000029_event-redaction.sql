-- Up Migration

-- Redaction (docs/erasure.md, "Withdrawing a catalogue book"): the passages of a withdrawn
-- catalogue book are taken out of the readers' conversations that quoted them. The event store's
-- redactEvents replaces events' data in a transaction that set `parley.redacting_events`; it
-- changes nothing else of an event, and every other update is refused as before. Row-level, so
-- appends (inserts) pay nothing for it.
DROP TRIGGER events_no_update ON events;
CREATE TRIGGER events_no_update BEFORE UPDATE ON events
  FOR EACH ROW WHEN (
    current_setting('parley.redacting_events', true) IS DISTINCT FROM 'on'
    OR NEW.position IS DISTINCT FROM OLD.position
    OR NEW.event_id IS DISTINCT FROM OLD.event_id
    OR NEW.stream_id IS DISTINCT FROM OLD.stream_id
    OR NEW.version IS DISTINCT FROM OLD.version
    OR NEW.type IS DISTINCT FROM OLD.type
    OR NEW.metadata IS DISTINCT FROM OLD.metadata
    OR NEW.transaction_id IS DISTINCT FROM OLD.transaction_id
    OR NEW.occurred_at IS DISTINCT FROM OLD.occurred_at)
  EXECUTE FUNCTION events_append_only();

-- Down Migration
DROP TRIGGER events_no_update ON events;
CREATE TRIGGER events_no_update BEFORE UPDATE ON events
  FOR EACH STATEMENT EXECUTE FUNCTION events_append_only();
