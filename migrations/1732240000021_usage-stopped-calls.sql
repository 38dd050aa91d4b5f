-- Up Migration

-- A model call stopped before its end (ModelCallStopped: cancelled, aborted, broken off midway)
-- was billed all the same: the usage read model keeps it as a 'stopped_call' row. Logs written
-- before the event existed have none, so there is nothing to backfill.
ALTER TABLE usage_records DROP CONSTRAINT usage_records_kind_check;
ALTER TABLE usage_records ADD CONSTRAINT usage_records_kind_check
  CHECK (kind IN ('answer', 'failure', 'cancel', 'tool_call', 'summary', 'stopped_call'));

-- Down Migration
DELETE FROM usage_records WHERE kind = 'stopped_call';
ALTER TABLE usage_records DROP CONSTRAINT usage_records_kind_check;
ALTER TABLE usage_records ADD CONSTRAINT usage_records_kind_check
  CHECK (kind IN ('answer', 'failure', 'cancel', 'tool_call', 'summary'));
