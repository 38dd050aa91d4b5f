-- Up Migration

-- Read models, rebuilt from the log by the projections consumer (npm run cli -- projections rebuild).
CREATE TABLE conversations (
  id               uuid        PRIMARY KEY,
  owner_id         text        NOT NULL,
  book_id          uuid,
  title            text,
  reading_position integer,
  forked_from      jsonb,
  version          integer     NOT NULL,
  message_count    integer     NOT NULL DEFAULT 0,
  created_at       timestamptz NOT NULL,
  last_activity_at timestamptz NOT NULL
);
CREATE INDEX conversations_owner_activity ON conversations (owner_id, last_activity_at DESC, id DESC);
CREATE INDEX conversations_owner_book ON conversations (owner_id, book_id);

CREATE TABLE messages (
  id               text        NOT NULL,
  conversation_id  uuid        NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
  version          integer     NOT NULL,
  role             text        NOT NULL CHECK (role IN ('user', 'assistant', 'tool_result')),
  turn_id          uuid        NOT NULL,
  content          text        NOT NULL,
  selected_text    text,
  tool_invocations jsonb,
  citations        jsonb,
  model            text,
  usage            jsonb,
  cost_usd         double precision,
  is_error         boolean,
  created_at       timestamptz NOT NULL,
  PRIMARY KEY (conversation_id, version)
);

-- Down Migration
DROP TABLE messages;
DROP TABLE conversations;
