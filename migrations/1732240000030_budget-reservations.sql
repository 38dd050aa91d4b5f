-- Up Migration

-- Money set aside for model calls in flight (docs/api.md, budgets): each call reserves its worst
-- case before it is made, under a per-reader advisory lock, so concurrent calls cannot all see the
-- same room left. A turn's reservation goes when its call's line reaches usage_records (in the same
-- statement, the projection deletes the turn's reservations made on an earlier version of its
-- stream); a book's contextualisation deletes its own with its line. `expires_at` bounds one a
-- crashed process left behind.
CREATE TABLE budget_reservations (
  id uuid PRIMARY KEY,
  owner_id text NOT NULL,
  turn_id uuid,
  -- the stream version the call was planned on: the line recording it comes at a later version
  at_version integer,
  book_id uuid,
  usd double precision NOT NULL CHECK (usd >= 0),
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL
);
CREATE INDEX budget_reservations_owner ON budget_reservations (owner_id, expires_at);
CREATE INDEX budget_reservations_turn ON budget_reservations (turn_id) WHERE turn_id IS NOT NULL;

-- Down Migration
DROP TABLE budget_reservations;
