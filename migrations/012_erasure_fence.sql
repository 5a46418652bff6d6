-- Up Migration

-- The erasure's fence: set, under the senior's advisory lock, before anything of the senior is
-- deleted. A session's presence claim takes the same lock and refuses a senior whose row is fenced
-- or gone, so no session starts, in any process sharing the database, once an erasure has begun;
-- the sweep then deletes the row with the rest. A fenced row left by an erasure that failed half-way
-- keeps the senior's kiosks refused until the erasure is run again.
ALTER TABLE seniors ADD COLUMN erasing_since timestamptz;
