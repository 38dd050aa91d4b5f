-- Up Migration

-- Changes to what a tenant admin set over a reader (their tenant, the tenant's cap, the reader's
-- budget) are announced on parley_admin_limits, so each process may keep what it read of them
-- (TenantBudgets' AdminLimitsCache) until told otherwise: `reader:<user id>` or `tenant:<tenant>`.
-- tenant_readers is rewritten every few minutes per reader (seen_at): only a change of tenant counts.
CREATE FUNCTION parley_announce_admin_limits() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  changed record := CASE WHEN TG_OP = 'DELETE' THEN OLD ELSE NEW END;
BEGIN
  IF TG_TABLE_NAME = 'tenant_budgets' THEN
    PERFORM pg_notify('parley_admin_limits', 'tenant:' || changed.tenant);
  ELSE
    PERFORM pg_notify('parley_admin_limits', 'reader:' || changed.user_id);
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER tenant_readers_announced AFTER INSERT OR DELETE ON tenant_readers
  FOR EACH ROW EXECUTE FUNCTION parley_announce_admin_limits();
CREATE TRIGGER tenant_readers_moved AFTER UPDATE ON tenant_readers
  FOR EACH ROW WHEN (OLD.tenant IS DISTINCT FROM NEW.tenant) EXECUTE FUNCTION parley_announce_admin_limits();
CREATE TRIGGER tenant_budgets_announced AFTER INSERT OR UPDATE OR DELETE ON tenant_budgets
  FOR EACH ROW EXECUTE FUNCTION parley_announce_admin_limits();
CREATE TRIGGER reader_budgets_announced AFTER INSERT OR UPDATE OR DELETE ON reader_budgets
  FOR EACH ROW EXECUTE FUNCTION parley_announce_admin_limits();

-- Down Migration
DROP TRIGGER reader_budgets_announced ON reader_budgets;
DROP TRIGGER tenant_budgets_announced ON tenant_budgets;
DROP TRIGGER tenant_readers_moved ON tenant_readers;
DROP TRIGGER tenant_readers_announced ON tenant_readers;
DROP FUNCTION parley_announce_admin_limits();
