-- Up Migration

-- The ledger bills each model call when it was made (issue: a turn crossing midnight moved its
-- tool calls' spend into the next month, and a range that left out the answer dropped them).
-- New ToolInvoked and ModelCallStopped events carry their call's costUsd; a line's cost_usd is
-- NULL only for lines written before that, which the usage query prices at list price as before.
ALTER TABLE usage_records ALTER COLUMN cost_usd DROP NOT NULL, ALTER COLUMN cost_usd DROP DEFAULT;
UPDATE usage_records SET cost_usd = NULL WHERE kind IN ('tool_call', 'stopped_call');

-- Spending that is no conversation's: a book's contextual retrieval (its model calls at upload).
ALTER TABLE usage_records ALTER COLUMN conversation_id DROP NOT NULL, ALTER COLUMN turn_id DROP NOT NULL;
ALTER TABLE usage_records ADD COLUMN book_id uuid;
ALTER TABLE usage_records DROP CONSTRAINT usage_records_kind_check;
ALTER TABLE usage_records ADD CONSTRAINT usage_records_kind_check
  CHECK (kind IN ('answer', 'failure', 'cancel', 'tool_call', 'summary', 'stopped_call', 'contextualization'));

-- An erased account's lines lose the reader's id but keep, until their month is over, a keyed
-- hash of it, so erasing an account does not hand out a fresh budget. The key is this
-- database's own secret (gen_random_uuid draws from pg_strong_random), never shown to anyone.
CREATE TABLE ledger_key (
  only_one boolean PRIMARY KEY DEFAULT true CHECK (only_one),
  key      bytea   NOT NULL
);
INSERT INTO ledger_key (key)
SELECT decode(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 'hex');

-- HMAC-SHA-256 (RFC 2104) with Postgres' built-in sha256: pgcrypto is not needed for this one use.
CREATE FUNCTION parley_hmac_sha256(key bytea, msg bytea) RETURNS bytea
LANGUAGE plpgsql IMMUTABLE STRICT AS $$
DECLARE
  k bytea := CASE WHEN length(key) > 64 THEN sha256(key) ELSE key END;
  ipad bytea;
  opad bytea;
BEGIN
  k := k || decode(repeat('00', 64 - length(k)), 'hex');
  ipad := k;
  opad := k;
  FOR i IN 0..63 LOOP
    ipad := set_byte(ipad, i, get_byte(k, i) # 54);
    opad := set_byte(opad, i, get_byte(k, i) # 92);
  END LOOP;
  RETURN sha256(opad || sha256(ipad || msg));
END $$;

-- The pseudonym a reader's erased lines keep: HMAC of their `sub` under the ledger's key.
CREATE FUNCTION ledger_pseudonym(owner_id text) RETURNS text
LANGUAGE sql STABLE STRICT AS $$
  SELECT encode(parley_hmac_sha256(key, convert_to(owner_id, 'UTF8')), 'hex') FROM ledger_key
$$;

ALTER TABLE usage_records ADD COLUMN owner_key text;
CREATE INDEX usage_records_owner_key_at ON usage_records (owner_key, at) WHERE owner_key IS NOT NULL;

-- (the index of forks by source, on the large events table, is built CONCURRENTLY by 025)

-- Down Migration
DROP INDEX usage_records_owner_key_at;
ALTER TABLE usage_records DROP COLUMN owner_key;
DROP FUNCTION ledger_pseudonym(text);
DROP FUNCTION parley_hmac_sha256(bytea, bytea);
DROP TABLE ledger_key;
DELETE FROM usage_records WHERE kind = 'contextualization';
ALTER TABLE usage_records DROP CONSTRAINT usage_records_kind_check;
ALTER TABLE usage_records ADD CONSTRAINT usage_records_kind_check
  CHECK (kind IN ('answer', 'failure', 'cancel', 'tool_call', 'summary', 'stopped_call'));
ALTER TABLE usage_records DROP COLUMN book_id;
ALTER TABLE usage_records ALTER COLUMN turn_id SET NOT NULL, ALTER COLUMN conversation_id SET NOT NULL;
UPDATE usage_records SET cost_usd = 0 WHERE cost_usd IS NULL;
ALTER TABLE usage_records ALTER COLUMN cost_usd SET DEFAULT 0, ALTER COLUMN cost_usd SET NOT NULL;
