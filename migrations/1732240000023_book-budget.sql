-- Up Migration

-- The uploader's monthly budget in force when the book was uploaded (their token's, or the
-- server's then): contextual retrieval holds each of its model calls to it, as a turn does.
-- NULL: none was set, or a book from before (BUDGET_USD_PER_MONTH then applies).
ALTER TABLE books ADD COLUMN budget_usd_per_month double precision;

-- Down Migration
ALTER TABLE books DROP COLUMN budget_usd_per_month;
