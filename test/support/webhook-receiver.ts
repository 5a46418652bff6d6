import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ALERT_JOBS_POLL_S, WEBHOOK_TIMEOUT_MS } from '../../runtime/jobs/caregiver-alerts.ts';

/** A capture's evaluation, then its post: each job waits up to a poll, the post up to its timeout. */
export const POST_BOUND_MS = 2 * ALERT_JOBS_POLL_S * 1000 + WEBHOOK_TIMEOUT_MS;

/** One post the caregiver alerts' webhook received: the raw body is what its signature covers. */
export interface Post {
  headers: IncomingHttpHeaders;
  raw: string;
  body: Record<string, unknown>;
}

/** A webhook receiver on a real port: records each post; answers a senior's posts with the statuses queued for it, then 200. */
export class WebhookReceiver {
  readonly posts: Post[] = [];
  readonly statuses = new Map<string, number[]>();
  /** A senior's next post is held (unanswered) until the promise resolves. */
  readonly holds = new Map<string, Promise<void>>();
  private readonly waiters = new Set<() => void>();
  private readonly server: Server;

  private constructor(server: Server) {
    this.server = server;
  }

  static async start(): Promise<WebhookReceiver> {
    const receiver: WebhookReceiver = new WebhookReceiver(
      createServer(async (req, res) => {
        const chunks: Buffer[] = [];
        for await (const chunk of req) chunks.push(chunk as Buffer);
        const raw = Buffer.concat(chunks).toString('utf8');
        const body = JSON.parse(raw) as Record<string, unknown>;
        receiver.posts.push({ headers: req.headers, raw, body });
        for (const wake of receiver.waiters) wake();
        const senior = String(body.seniorId);
        const hold = receiver.holds.get(senior);
        receiver.holds.delete(senior);
        await hold;
        res.writeHead(receiver.statuses.get(senior)?.shift() ?? 200).end();
      }),
    );
    await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/kohami-alerts`;
  }

  of(seniorId: string): Post[] {
    return this.posts.filter((p) => p.body.seniorId === seniorId);
  }

  /** Resolves once the senior has had `n` posts; rejects after `boundMs`. */
  async posted(seniorId: string, n: number, boundMs: number): Promise<Post[]> {
    if (this.of(seniorId).length >= n) return this.of(seniorId);
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(wake);
        reject(new Error(`${this.of(seniorId).length} of ${n} posts for ${seniorId} within ${boundMs} ms`));
      }, boundMs);
      const wake = () => {
        if (this.of(seniorId).length < n) return;
        clearTimeout(timer);
        this.waiters.delete(wake);
        resolve();
      };
      this.waiters.add(wake);
    });
    return this.of(seniorId);
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
