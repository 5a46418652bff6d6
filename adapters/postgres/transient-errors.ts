/** Node's socket errors when the database is restarting, unreachable or dropped the connection. */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);

/**
 * PostgreSQL SQLSTATEs that say "not now" rather than "never": connection exceptions (class 08),
 * the server shutting down or restarting (57P01–57P03), too many connections (53300),
 * serialization failures and deadlocks (40001, 40P01), and a query cancelled on a timeout (57014).
 */
const TRANSIENT_SQLSTATES = new Set(['53300', '57P01', '57P02', '57P03', '40001', '40P01', '57014']);

/**
 * A database failure worth one more try a little later: the server restarting or unreachable,
 * a dropped connection, the pool's connection wait (`POOL_WAIT_MS`) running out, a serialization
 * conflict. A constraint violation (an erased senior's foreign key) or a syntax error is not.
 */
export function isTransientDatabaseError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as Error & { code?: unknown }).code;
  if (typeof code === 'string') {
    if (SOCKET_CODES.has(code) || TRANSIENT_SQLSTATES.has(code) || code.startsWith('08')) return true;
  }
  // pg's own wordings for a lost or never-made connection, which carry no code.
  return /timeout exceeded when trying to connect|Connection terminated|connection timeout|Client has encountered a connection error|not queryable/i.test(err.message);
}
