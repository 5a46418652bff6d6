/**
 * What a caregiver may read of a senior's derived text (INV-C01): everything derived from the
 * conversation — mood-entry summaries, facts extracted from sessions, segments — only while the
 * senior's `conversation` consent is active, as the agent's recall itself; a fact also only while
 * its own category's consent is. `senior` is the SQL expression of the row's senior id.
 */
export const conversationConsented = (senior: string) =>
  `EXISTS (SELECT 1 FROM consents cc WHERE cc.senior_id = ${senior} AND cc.category = 'conversation' AND cc.revoked_at IS NULL)`;
