-- Up Migration

-- An erasure made through one runtime process, for the others sharing the database: each closes
-- its session of the senior (as `erased`) and drops the senior's entries from its in-memory caches.
-- Ids only, kept a short while (the erasing process prunes old rows), and written only while
-- another live process exists. The column is not named `senior_id` on purpose: the erasure's own
-- sweep deletes every row of every table with that column, and would delete its notice with them.
CREATE TABLE erasure_notices (
  id bigserial PRIMARY KEY,
  erased_senior uuid NOT NULL,
  -- The process that erased: it has already done its own part and skips its notice.
  process_id text NOT NULL,
  erased_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX erasure_notices_erased_at_idx ON erasure_notices (erased_at);
