-- Up Migration

-- A runtime process's heartbeat is one row here, not a refresh of each of its sessions' rows:
-- rewriting 10,000 session rows every PRESENCE_HEARTBEAT_MS held the database 0.15–0.3 s at rest
-- and 1–6 s under load, every query of every turn queued behind it. A session row is live while
-- its process's row is fresh; the rows of a silent process are removed with it.
CREATE TABLE presence_processes (
  process_id text PRIMARY KEY,
  heartbeat_at timestamptz NOT NULL DEFAULT now()
);
-- Processes with sessions in the table keep their latest beat (a silent one is removed as before).
INSERT INTO presence_processes (process_id, heartbeat_at)
  SELECT process_id, max(heartbeat_at) FROM session_presence GROUP BY process_id;
ALTER TABLE session_presence DROP COLUMN heartbeat_at;
