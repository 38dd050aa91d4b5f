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

const USER_AGENT = 'Parley-Webhooks/1';
/** Of a receiver's answer only the status counts: its body is read this far, then the connection closed. */
export const RESPONSE_BODY_MAX_BYTES = 4096;

/**
 * Sends one delivery as Standard Webhooks says: the JSON body `{type, timestamp, data}`, signed
 * with the endpoint's secret (`standardwebhooks`), with `webhook-id` (the same at every try),
 * `webhook-timestamp` and `webhook-signature`. A 2xx answer, complete within `timeoutMs`, delivers
 * it; redirects are not followed. The connection goes only to addresses checked now
 * (guardedLookup), not at registration alone.
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

  /**
   * One try, over by `timeoutMs` whatever the receiver does: the deadline (an AbortSignal) covers
   * the lookup, the connection, the headers and the body, so a receiver that answers slowly, a
   * byte at a time, holds a sender no longer than one that never answers. Of the body, the first
   * RESPONSE_BODY_MAX_BYTES are read (and dropped), then the connection is closed: the status
   * alone decides.
   */
  private post(url: URL, headers: Record<string, string>, body: string): Promise<DeliveryOutcome> {
    const request = url.protocol === 'https:' ? https.request : http.request;
    const deadline = AbortSignal.timeout(this.config.timeoutMs);
    return new Promise((settle) => {
      const failed = (error: string): void =>
        settle({
          delivered: false,
          error: deadline.aborted ? `no complete answer within ${this.config.timeoutMs} ms` : error,
        });
      const req = request(
        url,
        {
          method: 'POST',
          headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
          lookup: guardedLookup(this.config.allowPrivateUrls, this.resolve) as never,
          signal: deadline,
          agent: false, // a connection per try: each one looks the name up (and checks it) again
        },
        (res) => {
          const status = res.statusCode ?? 0;
          const answered = () =>
            settle(
              status >= 200 && status < 300
                ? { delivered: true, status }
                : { delivered: false, error: `HTTP ${status}` },
            );
          let read = 0;
          res.on('data', (chunk: Buffer) => {
            read += chunk.length;
            if (read < RESPONSE_BODY_MAX_BYTES) return;
            answered();
            res.destroy(); // the rest is not read
          });
          res.on('end', answered);
          // cut off before its end (the deadline, a reset): a promise settles once, so after
          // `end` or the cap this changes nothing
          res.on('close', () => failed('the answer was cut off'));
          res.on('error', (e) => failed(e.message));
        },
      );
      req.on('error', (e: NodeJS.ErrnoException) =>
        e instanceof WebhookUrlRefused
          ? settle({ delivered: false, error: `refused: ${e.message}`, detail: e.detail })
          : failed(e.message),
      );
      req.end(body);
    });
  }
}
