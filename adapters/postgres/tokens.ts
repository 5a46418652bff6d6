import { createHash, randomBytes } from 'node:crypto';

/** Tokens are random and long, so one unsalted sha256 is enough to make a leaked table useless. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

export function generateToken(prefix: 'kiosk' | 'admin' | 'operator' | 'caregiver'): string {
  return `${prefix}_${randomBytes(24).toString('base64url')}`;
}
