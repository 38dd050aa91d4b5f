-- Up Migration

-- A tool call's model call may have gone through the Message Batches API (ToolInvoked.batched),
-- at half the list price: the usage read model keeps that, so a turn that did not reply is priced
-- as it was paid. Events written before the field existed were all streaming calls: false.
ALTER TABLE usage_records ADD COLUMN batched boolean NOT NULL DEFAULT false;

-- Down Migration
ALTER TABLE usage_records DROP COLUMN batched;
