import { shortDay } from './words.js';

/**
 * One open mood alert of `GET /v1/admin/seniors/:id/mood-alerts` as a plain French sentence; null for
 * a closed one or a kind this page does not know (a newer runtime's).
 */
export function alertSentence(alert) {
  if (!alert.open) return null;
  if (alert.kind === 'tier_streak') return `Humeur préoccupante ${alert.days} jours de suite, du ${shortDay(alert.from)} au ${shortDay(alert.to)}`;
  if (alert.kind === 'weekly_drop') return `Humeur en baisse de ${Math.round(alert.drop)} points sur la semaine`;
  return null;
}
