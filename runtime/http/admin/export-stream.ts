import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { PgSeniorExportRepository } from '../../../adapters/postgres/pg-senior-export.repository.ts';

/**
 * Rows read per statement: what one batch holds in memory (a mood row is about 1.3 kB of JSON) and
 * how long it holds the embedded database's one session; 100 rather than 250 held it for less at a
 * time with no slower export (bench:export).
 */
export const EXPORT_BATCH_ROWS = 100;

export interface ExportStreamSettings {
  /** The longest the client may leave written bytes unread (EXPORT_STALL_MS); then the export is cut. */
  stallMs: number;
}

/** How a streamed export ended: whole, its client gone, its client reading nothing for too long, or a read failed. */
export type ExportOutcome = 'complete' | 'client_gone' | 'stalled' | 'failed';

export interface ExportResult {
  outcome: ExportOutcome;
  rows: number;
  bytes: number;
  error?: unknown;
}

/**
 * Writes one senior's export as a JSON document while it reads it: a batch of rows, written, then the
 * next once the socket has taken it (its 'drain'), with a turn of the event loop between batches so a
 * kiosk's turn never waits behind the whole export. The rows are the database's own JSON text, never
 * parsed here. `signal` is the client leaving: the reads stop at the next batch. A document cut short
 * (client gone, stalled, a read failed after the headers) ends with the connection destroyed, so no
 * client takes a truncated document for a whole one.
 */
export async function streamExport(
  res: ServerResponse,
  source: Pick<PgSeniorExportRepository, 'plan' | 'batch'>,
  seniorId: string,
  senior: string,
  signal: AbortSignal,
  settings: ExportStreamSettings,
): Promise<ExportResult> {
  let rows = 0;
  let bytes = 0;
  const write = async (text: string) => {
    bytes += Buffer.byteLength(text);
    if (res.write(text)) return;
    await once(res, 'drain', { signal: AbortSignal.any([signal, AbortSignal.timeout(settings.stallMs)]) });
  };
  try {
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
    await write(`{"seniorId":${JSON.stringify(seniorId)},"exportedAt":${JSON.stringify(new Date().toISOString())},"senior":${senior},`);
    const plan = await source.plan(seniorId);
    const omitted = Object.fromEntries(plan.tables.filter((t) => t.leftOut.length > 0).map((t) => [t.name, t.leftOut]));
    await write(`"consents":${JSON.stringify(plan.consents)},"omitted":${JSON.stringify(omitted)},"tables":{`);
    for (const [i, table] of plan.tables.entries()) {
      await write(`${i > 0 ? ',' : ''}${JSON.stringify(table.name)}:[`);
      let after: string[] | null = null;
      for (;;) {
        signal.throwIfAborted();
        const batch = await source.batch(seniorId, table, after, EXPORT_BATCH_ROWS);
        if (batch.rows.length > 0) await write(`${after ? ',' : ''}${batch.rows.join(',')}`);
        rows += batch.rows.length;
        if (batch.rows.length < EXPORT_BATCH_ROWS) break;
        after = batch.last;
        await nextTurn();
      }
      await write(']');
    }
    res.end('}}');
    return { outcome: 'complete', rows, bytes };
  } catch (error) {
    res.destroy();
    if (signal.aborted) return { outcome: 'client_gone', rows, bytes };
    if (error instanceof Error && error.name === 'AbortError') return { outcome: 'stalled', rows, bytes };
    return { outcome: 'failed', rows, bytes, error };
  }
}
