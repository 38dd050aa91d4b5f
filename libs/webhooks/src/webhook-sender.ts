import http from 'node:http';
import https from 'node:https';
import { Webhook } from 'standardwebhooks';
import { WebhooksConfig } from '@parley/config';
import { DueDelivery } from './webhook-outbox';
import {
  guardedLookup,
  NOT_PUBLIC_HOST,
  parseWebhookUrl,
  Resolver,
  refusedLiteral,
  systemResolver,
  WebhookUrlRefused,
} from './webhook-url';

/**
 * How one try went: delivered (2xx), or why not: `error` is kept on the delivery (its reader may
 * see it), `detail` is for the worker's log alone (what a refused name resolved to).
 */
export type DeliveryOutcome =
  { delivered: true; status: number } | { delivered: false; error: string; detail?: string };

/** What a receiver's answer may hold that a delivery reads (the status; the body is drained unread). */
const USER_AGENT = 'Parley-Webhooks/1';

/**
 * Sends one delivery as Standard Webhooks says: the JSON body `{type, timestamp, data}`, signed
 * with the endpoint's secret (`standardwebhooks`), with `webhook-id` (the same at every try),
 * `webhook-timestamp` and `webhook-signature`. A 2xx answer delivers it; redirects are not
 * followed. The connection goes only to addresses checked now (guardedLookup), not at
 * registration alone.
 */
export class WebhookSender {
  constructor(
    private readonly config: Pick<WebhooksConfig, 'allowPrivateUrls' | 'timeoutMs'>,
    private readonly resolve: Resolver = systemResolver,
  ) {}

  async send(delivery: DueDelivery, now = new Date()): Promise<DeliveryOutcome> {
    let url: URL;
    try {
      url = parseWebhookUrl(delivery.url);
    } catch (e) {
      return { delivered: false, error: `refused: ${(e as Error).message}` };
    }
    const literal = refusedLiteral(url, this.config.allowPrivateUrls);
    if (literal) return { delivered: false, error: `refused: ${NOT_PUBLIC_HOST}`, detail: `${literal} is not public` };
    const body = JSON.stringify(delivery.payload);
    const signature = new Webhook(delivery.secret).sign(delivery.messageId, now, body);
    const headers = {
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      'webhook-id': delivery.messageId,
      'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
      'webhook-signature': signature,
    };
    return this.post(url, headers, body);
  }

  private post(url: URL, headers: Record<string, string>, body: string): Promise<DeliveryOutcome> {
    const request = url.protocol === 'https:' ? https.request : http.request;
    return new Promise((resolve) => {
      const req = request(
        url,
        {
          method: 'POST',
          headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
          lookup: guardedLookup(this.config.allowPrivateUrls, this.resolve) as never,
          timeout: this.config.timeoutMs,
          agent: false, // a connection per try: each one looks the name up (and checks it) again
        },
        (res) => {
          res.resume(); // the body is not read, only drained
          const status = res.statusCode ?? 0;
          res.on('end', () =>
            resolve(
              status >= 200 && status < 300
                ? { delivered: true, status }
                : { delivered: false, error: `HTTP ${status}` },
            ),
          );
          res.on('error', (e) => resolve({ delivered: false, error: e.message }));
        },
      );
      req.on('timeout', () => req.destroy(new Error(`no answer within ${this.config.timeoutMs} ms`)));
      req.on('error', (e: NodeJS.ErrnoException) =>
        resolve(
          e instanceof WebhookUrlRefused
            ? { delivered: false, error: `refused: ${e.message}`, detail: e.detail }
            : { delivered: false, error: e.message },
        ),
      );
      req.end(body);
    });
  }
}
