/**
 * A webhook receiver as an app developer writes one: a plain HTTP server that verifies each
 * delivery's signature with `standardwebhooks` (Webhook.verify, the endpoint's secret) and keeps
 * what it got. Each path is one endpoint; how it answers is up to the test.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface ReceivedWebhook {
  path: string;
  id: string;
  timestamp: string;
  /** the verified body */
  body: { type: string; timestamp: string; data: Record<string, any> };
  /** how many times this path got this webhook-id, counting this one */
  attempt: number;
  /** what the receiver answered */
  status: number | 'hang' | 'drip';
  /** for 'hang' and 'drip': how long after the request the sender closed the connection (unset while open) */
  closedAfterMs?: number;
}

/**
 * How a path answers a delivery (its `attempt`-th of that webhook-id): a status; never ('hang');
 * or 'drip': 200 and a chunked body of one byte every DRIP_EVERY_MS that never ends, a receiver
 * never silent long enough for a timeout on silence. Default 204.
 */
export type Answer = (delivery: { id: string; attempt: number }) => number | 'hang' | 'drip';

export const DRIP_EVERY_MS = 2_000;

export interface WebhookReceiver {
  url(path: string): string;
  /** the secret deliveries to `path` are verified with (the one POST /v1/webhooks answered) */
  expect(path: string, secret: string, answer?: Answer): void;
  /** deliveries whose signature verified (every try, duplicates included) */
  received(path?: string): ReceivedWebhook[];
  /** deliveries answered 'hang' or 'drip' whose connection is open now */
  open(path?: string): ReceivedWebhook[];
  /** deliveries that failed verification (should stay empty) */
  rejected(): Array<{ path: string; error: string }>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const endpoints = new Map<string, { secret: string; answer: Answer }>();
  const received: ReceivedWebhook[] = [];
  const rejected: Array<{ path: string; error: string }> = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      const endpoint = endpoints.get(path);
      const payload = Buffer.concat(chunks).toString('utf8');
      const headers = {
        'webhook-id': String(req.headers['webhook-id'] ?? ''),
        'webhook-timestamp': String(req.headers['webhook-timestamp'] ?? ''),
        'webhook-signature': String(req.headers['webhook-signature'] ?? ''),
      };
      if (!endpoint) {
        rejected.push({ path, error: 'no endpoint expected here' });
        res.writeHead(404).end();
        return;
      }
      let body: ReceivedWebhook['body'];
      try {
        body = new Webhook(endpoint.secret).verify(payload, headers) as ReceivedWebhook['body'];
      } catch (e) {
        rejected.push({ path, error: String(e) });
        res.writeHead(400).end();
        return;
      }
      const id = headers['webhook-id'];
      const attempt = received.filter((r) => r.path === path && r.id === id).length + 1;
      const status = endpoint.answer({ id, attempt });
      const got: ReceivedWebhook = { path, id, timestamp: headers['webhook-timestamp'], body, attempt, status };
      received.push(got);
      if (status === 'hang' || status === 'drip') {
        const since = Date.now();
        res.on('close', () => (got.closedAfterMs = Date.now() - since));
      }
      if (status === 'drip') {
        res.writeHead(200, { 'content-type': 'text/plain' }).write('.');
        const drip = setInterval(() => res.write('.'), DRIP_EVERY_MS);
        res.on('close', () => clearInterval(drip));
      } else if (status !== 'hang') res.writeHead(status).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: (path) => base + path,
    expect: (path, secret, answer = () => 204) => endpoints.set(path, { secret, answer }),
    received: (path) => received.filter((r) => path === undefined || r.path === path),
    open: (path) =>
      received.filter(
        (r) =>
          (r.status === 'hang' || r.status === 'drip') && r.closedAfterMs === undefined && (!path || r.path === path),
      ),
    rejected: () => rejected,
    close: () => {
      server.closeAllConnections();
      return new Promise((r) => server.close(() => r()));
    },
  };
}
