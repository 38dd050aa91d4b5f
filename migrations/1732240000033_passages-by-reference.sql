-- Up Migration

-- Passages by reference (docs/event-store.md, "What is immutable"): events that carry a book's
-- text keep which passage it was, and the text is joined from book_chunks when the log is read.
-- A withdrawn book's text goes by deleting its passages; no event is ever updated again.

-- The passages of withdrawn catalogue books (ids only, no text): what an event written before
-- passages were kept by reference (0.3) quoted from them is left out when it is read.
CREATE TABLE withdrawn_passages (
  chunk_id     uuid        PRIMARY KEY,
  book_id      uuid        NOT NULL,
  withdrawn_at timestamptz NOT NULL DEFAULT now()
);

-- A chunk id as a uuid, or null for one that is not (events of tests and demos name made-up passages).
CREATE FUNCTION parley_passage_id(id text) RETURNS uuid LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN id ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' THEN id::uuid END
$$;

-- An event's data as readers see it: a tool result's passages and an answer's quotes joined from
-- book_chunks (a passage that is gone reads as the withdrawal notice, a quote of it is left out),
-- and in events stored with their text (0.3), what came from withdrawn passages taken out as 0.3's
-- redaction did. Every other event's data as stored. The event store's reads call it for the
-- two types that may carry book text, so other events pay nothing.
CREATE FUNCTION parley_event_data(event_type text, data jsonb) RETURNS jsonb
LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
DECLARE
  passage_gone CONSTANT text := '[This passage came from a book its publisher has withdrawn: it is no longer available.]';
  passages_gone CONSTANT text := '[These passages came from a book its publisher has withdrawn: they are no longer available.]';
  citations jsonb;
BEGIN
  IF event_type = 'ToolResultRecorded' THEN
    IF data ? 'contentParts' THEN
      RETURN (data - 'contentParts') || jsonb_build_object('content', (
        SELECT coalesce(string_agg(
                 CASE WHEN jsonb_typeof(t.part) = 'string' THEN t.part #>> '{}' ELSE coalesce(c.text, passage_gone) END,
                 '' ORDER BY t.ord), '')
          FROM jsonb_array_elements(data -> 'contentParts') WITH ORDINALITY AS t(part, ord)
          LEFT JOIN book_chunks c ON c.id = parley_passage_id(t.part ->> 'passage')));
    END IF;
    IF EXISTS (SELECT 1 FROM jsonb_array_elements(coalesce(data -> 'chunks', '[]')) ch
                 JOIN withdrawn_passages w ON w.chunk_id = parley_passage_id(ch ->> 'chunkId')) THEN
      RETURN data || jsonb_build_object('content', passages_gone);
    END IF;
    RETURN data;
  END IF;
  IF event_type = 'AssistantReplied' AND jsonb_typeof(data -> 'citations') = 'array'
     AND EXISTS (SELECT 1 FROM jsonb_array_elements(data -> 'citations') q WHERE q ? 'quoted' OR q ? 'quote') THEN
    SELECT jsonb_agg(
             CASE
               WHEN q ? 'quoted' AND c.text IS NOT NULL THEN (q - 'quoted') || jsonb_build_object('quote', c.text)
               WHEN q ? 'quoted' THEN q - 'quoted'
               WHEN q ? 'quote' AND EXISTS (SELECT 1 FROM withdrawn_passages w WHERE w.chunk_id = parley_passage_id(q ->> 'chunkId'))
                 THEN q - 'quote'
               ELSE q
             END ORDER BY t.ord)
      INTO citations
      FROM jsonb_array_elements(data -> 'citations') WITH ORDINALITY AS t(q, ord)
      LEFT JOIN book_chunks c ON q ? 'quoted' AND c.id = parley_passage_id(q ->> 'chunkId');
    RETURN jsonb_set(data, '{citations}', citations);
  END IF;
  RETURN data;
END $$;

-- No event is updated again, redacted or not: 0.3's redaction path is closed (erasure of a whole
-- stream, a delete, stays the one sanctioned removal).
DROP TRIGGER events_no_update ON events;
CREATE TRIGGER events_no_update BEFORE UPDATE ON events
  FOR EACH STATEMENT EXECUTE FUNCTION events_append_only();

-- Down Migration
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
DROP FUNCTION parley_event_data(text, jsonb);
DROP FUNCTION parley_passage_id(text);
DROP TABLE withdrawn_passages;
