-- Up Migration

-- Models whose provider refused a call offering tools (Ollama: "… does not support tools"):
-- learned once, by any worker, so no later turn pays for the same refusal; their turns run the
-- always-retrieve plan. An operator who upgraded the model deletes its row (docs/providers.md).
CREATE TABLE model_tool_refusals (
  model text PRIMARY KEY,
  message text NOT NULL,
  refused_at timestamptz NOT NULL DEFAULT now()
);

-- Down Migration
DROP TABLE model_tool_refusals;
