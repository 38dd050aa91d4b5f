-- Up Migration

-- A stream's folded state at a version, kept so a process that has not folded the stream yet
-- (a new worker after a deploy, a conversation that fell out of its cache) reads the events after
-- it instead of the whole stream. Derived data: the log stays the truth, and `fold` names the fold
-- and its version, so a build whose fold changed reads none of the older snapshots.
CREATE TABLE fold_snapshots (
  stream_id  text        NOT NULL,
  fold       text        NOT NULL,
  version    integer     NOT NULL CHECK (version > 0),
  state_json text        NOT NULL,
  taken_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (stream_id, fold)
);

-- Down Migration
DROP TABLE fold_snapshots;
