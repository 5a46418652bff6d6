-- Up Migration

-- One row per live session, whichever runtime process holds it: operators list every
-- process's actors, and one senior has one live session across processes (senior_id unique).
-- State, not conversation: no text here.
CREATE TABLE session_presence (
  session_id uuid PRIMARY KEY,
  senior_id uuid NOT NULL UNIQUE REFERENCES seniors (id) ON DELETE CASCADE,
  process_id text NOT NULL,
  state text NOT NULL DEFAULT 'conversation.idle',
  current_flux text,
  turn_count integer NOT NULL DEFAULT 0,
  last_latency_ms integer,
  last_flux text,
  connected_since timestamptz NOT NULL DEFAULT now(),
  heartbeat_at timestamptz NOT NULL DEFAULT now(),
  -- Set by an operator's close on another process; the owner closes the session at its next heartbeat.
  close_requested text CHECK (close_requested IN ('operator'))
);
CREATE INDEX session_presence_process_idx ON session_presence (process_id);
