-- Up Migration

-- Fair webhook delivery (docs/webhooks.md, "Fair delivery"): a delivery being sent is leased
-- until leased_until, so a sender can count what an endpoint and a reader have in flight and take
-- no more than their share. A failed try, or a lease run out (its sender died), clears it or
-- makes it stale; the partial index holds only the few in flight.
ALTER TABLE webhook_deliveries ADD COLUMN leased_until timestamptz;
CREATE INDEX webhook_deliveries_leased ON webhook_deliveries (leased_until) WHERE leased_until IS NOT NULL;

-- Down Migration
DROP INDEX webhook_deliveries_leased;
ALTER TABLE webhook_deliveries DROP COLUMN leased_until;
