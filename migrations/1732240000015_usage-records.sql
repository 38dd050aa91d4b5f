-- Up Migration

-- The usage read model: one row per event that ends a turn, records a tool call or summarises the
-- history, with the tokens, model and price it carries. GET /v1/conversations/:id/usage and
-- GET /v1/usage sum them. A conversation's rows go with it when it is deleted.
CREATE TABLE usage_records (
  conversation_id              uuid             NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
  version                      integer          NOT NULL,
  turn_id                      uuid             NOT NULL,
  kind                         text             NOT NULL
                               CHECK (kind IN ('answer', 'failure', 'cancel', 'tool_call', 'summary')),
  model                        text,
  input_tokens                 bigint           NOT NULL DEFAULT 0,
  output_tokens                bigint           NOT NULL DEFAULT 0,
  cache_read_input_tokens      bigint           NOT NULL DEFAULT 0,
  cache_creation_input_tokens  bigint           NOT NULL DEFAULT 0,
  cost_usd                     double precision NOT NULL DEFAULT 0,
  at                           timestamptz      NOT NULL,
  PRIMARY KEY (conversation_id, version)
);
CREATE INDEX usage_records_at ON usage_records (at);

-- The conversations already in the read models get their rows from the log (a rebuild of the
-- read models writes the same rows through the projection).
INSERT INTO usage_records (conversation_id, version, turn_id, kind, model, input_tokens, output_tokens,
                           cache_read_input_tokens, cache_creation_input_tokens, cost_usd, at)
SELECT c.id, e.version, (e.data->>'turnId')::uuid,
       CASE e.type WHEN 'AssistantReplied' THEN 'answer' WHEN 'TurnFailed' THEN 'failure'
                   WHEN 'TurnCancelled' THEN 'cancel' WHEN 'ToolInvoked' THEN 'tool_call' ELSE 'summary' END,
       e.data->>'model',
       COALESCE((e.data->'usage'->>'inputTokens')::bigint, 0),
       COALESCE((e.data->'usage'->>'outputTokens')::bigint, 0),
       COALESCE((e.data->'usage'->>'cacheReadInputTokens')::bigint, 0),
       COALESCE((e.data->'usage'->>'cacheCreationInputTokens')::bigint, 0),
       COALESCE((e.data->>'costUsd')::double precision, 0),
       e.occurred_at
  FROM conversations c
  JOIN events e ON e.stream_id = 'conversation-' || c.id::text
 WHERE e.type IN ('AssistantReplied', 'TurnFailed', 'TurnCancelled', 'ToolInvoked', 'HistorySummarized')
   AND e.version <= c.version;

-- Down Migration
DROP TABLE usage_records;
