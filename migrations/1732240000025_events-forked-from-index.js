/* eslint-disable */
// Forks of a conversation by their source: erasure finds the forks made while it ran.
// Built CONCURRENTLY, outside a transaction, so appends to the events table go on while it
// builds during a rolling upgrade (docs/operations.md, "Upgrades"). A build a failure left
// INVALID is dropped and built again.

exports.up = (pgm) => {
  pgm.noTransaction();
  pgm.sql(`DO $$ BEGIN
    IF EXISTS (SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
                WHERE c.relname = 'events_conversation_forked_from' AND NOT i.indisvalid) THEN
      EXECUTE 'DROP INDEX events_conversation_forked_from';
    END IF;
  END $$`);
  pgm.sql(`CREATE INDEX CONCURRENTLY IF NOT EXISTS events_conversation_forked_from
             ON events ((data -> 'forkedFrom' ->> 'conversationId')) WHERE type = 'ConversationStarted'`);
};

exports.down = (pgm) => {
  pgm.noTransaction();
  pgm.sql('DROP INDEX CONCURRENTLY IF EXISTS events_conversation_forked_from');
};
