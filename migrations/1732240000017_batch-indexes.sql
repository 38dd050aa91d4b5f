-- Up Migration

-- The workers' sweep looks for batches started recently that have no BatchCompleted (a worker
-- may have died between a batch's last turn ending and its completion), every 30 s: both lookups
-- by index, so the sweep costs the batches in its window, not the log.
CREATE INDEX events_batches_started ON events (occurred_at) WHERE type = 'BatchStarted';
CREATE INDEX events_batches_completed ON events (stream_id, (data->>'batchId')) WHERE type = 'BatchCompleted';

-- Down Migration
DROP INDEX events_batches_completed;
DROP INDEX events_batches_started;
