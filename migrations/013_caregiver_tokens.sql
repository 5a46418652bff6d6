-- Up Migration

-- An API token can be rotated and revoked while its row — its identity — stays: a caregiver's links
-- to seniors hang on the row's id (caregiver_seniors, ON DELETE CASCADE), so deleting the row to
-- revoke a token would drop them. Rotation replaces the hash; revocation clears it, and every lookup
-- goes by hash, so a revoked token matches no row. `revoked_at` says when, and holds only while
-- there is no hash (a NULL never equals anything, so the unique index admits any number of them).
ALTER TABLE api_tokens
  ALTER COLUMN token_hash DROP NOT NULL,
  ADD COLUMN revoked_at timestamptz,
  ADD CONSTRAINT api_tokens_revoked_has_no_hash CHECK ((token_hash IS NULL) = (revoked_at IS NOT NULL));
