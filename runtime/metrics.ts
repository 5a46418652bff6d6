import { Counter, Registry } from 'prom-client';

/** Every Prometheus metric of one runtime, on its own registry (tests start several runtimes). */
export function createMetrics() {
  const registry = new Registry();
  const dualWrite = new Counter({
    name: 'kohami_memory_dual_write_total',
    help: 'Memory operations per backend of the Zep/pgvector dual-write, by outcome',
    labelNames: ['backend', 'operation', 'outcome'] as const,
    registers: [registry],
  });
  return { registry, dualWrite };
}

export type Metrics = ReturnType<typeof createMetrics>;
