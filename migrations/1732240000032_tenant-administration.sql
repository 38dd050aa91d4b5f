-- Up Migration

-- Tenant administration (docs/operations.md, "Tenant administration"). Which tenant a reader is in
-- is their token's parley_tenant, not the log's: the API notes it on their authenticated requests,
-- and a tenant's usage is then its readers' lines of the one usage ledger, so it adds up to theirs.
CREATE TABLE tenant_readers (
  user_id text PRIMARY KEY,
  tenant text NOT NULL,
  seen_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX tenant_readers_tenant ON tenant_readers (tenant);

-- A tenant admin's cap on all of the tenant's readers together, per calendar month (UTC).
CREATE TABLE tenant_budgets (
  tenant text PRIMARY KEY,
  monthly_usd double precision NOT NULL CHECK (monthly_usd >= 0),
  set_by text NOT NULL,
  set_at timestamptz NOT NULL DEFAULT now()
);

-- A tenant admin's budget for one reader: it holds while the reader is in that tenant, over their token's.
CREATE TABLE reader_budgets (
  user_id text PRIMARY KEY,
  tenant text NOT NULL,
  monthly_usd double precision NOT NULL CHECK (monthly_usd >= 0),
  set_by text NOT NULL,
  set_at timestamptz NOT NULL DEFAULT now()
);

-- The tenant a reservation's reader was in, so a tenant's calls in flight can be summed.
ALTER TABLE budget_reservations ADD COLUMN tenant text;
CREATE INDEX budget_reservations_tenant ON budget_reservations (tenant) WHERE tenant IS NOT NULL;

-- Down Migration
DROP INDEX budget_reservations_tenant;
ALTER TABLE budget_reservations DROP COLUMN tenant;
DROP TABLE reader_budgets;
DROP TABLE tenant_budgets;
DROP TABLE tenant_readers;
