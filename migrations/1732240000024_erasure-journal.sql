-- Up Migration

-- The erasure journal (docs/erasure.md, "Backups and restores") lives in a database of its own
-- (ERASURE_JOURNAL_URL), which a restore of this one does not roll back. `erasures` is its outbox:
-- a completed erasure not yet in the journal has no `journaled_at`, and the worker's erasure
-- sweep journals it (past erasures too, when the journal is first set). An erasure done again
-- from the journal after a restore keeps its id and says when (`replayed_at`).
ALTER TABLE erasures ADD COLUMN journaled_at timestamptz, ADD COLUMN replayed_at timestamptz;
CREATE INDEX erasures_unjournaled ON erasures (completed_at)
  WHERE completed_at IS NOT NULL AND journaled_at IS NULL;

-- Down Migration
DROP INDEX erasures_unjournaled;
ALTER TABLE erasures DROP COLUMN replayed_at, DROP COLUMN journaled_at;
