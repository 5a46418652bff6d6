import { Counter, Histogram, Registry } from 'prom-client';

/** Every Prometheus metric of one runtime, on its own registry (tests start several runtimes). */
export function createMetrics() {
  const registry = new Registry();
  const dualWrite = new Counter({
    name: 'kohami_memory_dual_write_total',
    help: 'Memory operations per backend of the Zep/pgvector dual-write, by outcome',
    labelNames: ['backend', 'operation', 'outcome'] as const,
    registers: [registry],
  });
  const closeJobs = new Counter({
    name: 'kohami_close_jobs_total',
    help: 'Close-time derivation jobs (mood and summary per turn, fact extraction per session), by outcome',
    labelNames: ['kind', 'outcome'] as const,
    registers: [registry],
  });
  const closeJobDuration = new Histogram({
    name: 'kohami_close_job_duration_seconds',
    help: 'Duration of close-time derivation jobs',
    labelNames: ['kind'] as const,
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  return { registry, dualWrite, closeJobs, closeJobDuration };
}

export type Metrics = ReturnType<typeof createMetrics>;
