import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { DueDelivery } from './webhook-outbox';
import { newWebhookSecret } from './webhook-secret';
import { RESPONSE_BODY_MAX_BYTES, WebhookSender } from './webhook-sender';
import { NOT_PUBLIC_HOST, Resolver } from './webhook-url';

describe(WebhookSender.name, () => {
  let server: http.Server;
  let port = 0;
  let answer: (res: http.ServerResponse) => void = (res) => res.writeHead(204).end();
  const got: Array<{ headers: http.IncomingHttpHeaders; body: string }> = [];
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        got.push({ headers: req.headers, body });
        answer(res);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });
  beforeEach(() => {
    got.length = 0;
    answer = (res) => res.writeHead(204).end();
  });

  const secret = newWebhookSecret();
  const delivery = (url: string): DueDelivery => ({
    id: '1',
    endpointId: 'e',
    url,
    secret,
    messageId: 'msg_0a4c5b1e-7d7a-4c55-9a43-1d1f0f6c4b9e',
    payload: { type: 'turn.ended', timestamp: '2026-01-02T03:04:05.000Z', data: { turnId: 't', status: 'replied' } },
    attempt: 1,
  });
  /** Every name resolves to this machine, as a rebinding DNS would make a registered name do. */
  const rebinding: Resolver = async () => [{ address: '127.0.0.1', family: 4 }];

  it('posts the message signed as Standard Webhooks says, verifiable with the secret', async () => {
    const sut = new WebhookSender({ allowPrivateUrls: true, timeoutMs: 2_000 });
    const outcome = await sut.send(delivery(`http://127.0.0.1:${port}/hook`));
    expect(outcome).toEqual({ delivered: true, status: 204 });
    const [{ headers, body }] = got;
    expect(headers['content-type']).toBe('application/json');
    expect(headers['webhook-id']).toBe('msg_0a4c5b1e-7d7a-4c55-9a43-1d1f0f6c4b9e');
    const verified = new Webhook(secret).verify(body, {
      'webhook-id': String(headers['webhook-id']),
      'webhook-timestamp': String(headers['webhook-timestamp']),
      'webhook-signature': String(headers['webhook-signature']),
    });
    expect(verified).toEqual(delivery('').payload);
  });

  it('counts anything but 2xx as a failure, and follows no redirect', async () => {
    const sut = new WebhookSender({ allowPrivateUrls: true, timeoutMs: 2_000 });
    answer = (res) => res.writeHead(500).end('nope');
    expect(await sut.send(delivery(`http://127.0.0.1:${port}/hook`))).toEqual({ delivered: false, error: 'HTTP 500' });
    answer = (res) => res.writeHead(302, { location: 'http://169.254.169.254/' }).end();
    expect(await sut.send(delivery(`http://127.0.0.1:${port}/hook`))).toEqual({ delivered: false, error: 'HTTP 302' });
    expect(got).toHaveLength(2);
  });

  /** Sends one delivery to the receiver, with how long it took. */
  const timed = async (sut: WebhookSender, url = `http://127.0.0.1:${port}/hook`) => {
    const started = Date.now();
    const outcome = await sut.send(delivery(url));
    return { outcome, ms: Date.now() - started };
  };

  it('gives up on a receiver that does not answer in time', async () => {
    const sut = new WebhookSender({ allowPrivateUrls: true, timeoutMs: 200 });
    answer = () => undefined;
    const { outcome } = await timed(sut);
    expect(outcome).toEqual({ delivered: false, error: 'no complete answer within 200 ms' });
  });

  it('gives up at the deadline on a receiver that answers 200 and then a byte at a time: a failure', async () => {
    const sut = new WebhookSender({ allowPrivateUrls: true, timeoutMs: 600 });
    // never silent for long, so a timeout on silence alone never fires
    answer = (res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const drip = setInterval(() => res.write('.'), 50);
      res.on('close', () => clearInterval(drip));
    };
    const { outcome, ms } = await timed(sut);
    expect(outcome).toEqual({ delivered: false, error: 'no complete answer within 600 ms' });
    expect(ms).toBeGreaterThanOrEqual(550);
    expect(ms).toBeLessThan(3_000);
  });

  it('reads no more than the first 4 KiB of an answer: a 2xx status with an endless body is delivered', async () => {
    const sut = new WebhookSender({ allowPrivateUrls: true, timeoutMs: 5_000 });
    let written = 0;
    answer = (res) => {
      res.writeHead(200);
      const flood = setInterval(() => {
        res.write(Buffer.alloc(16_384));
        written += 16_384;
      }, 5);
      res.on('close', () => clearInterval(flood));
    };
    const { outcome, ms } = await timed(sut);
    expect(outcome).toEqual({ delivered: true, status: 200 });
    expect(ms).toBeLessThan(2_500); // long before the deadline: it stopped reading
    expect(written).toBeGreaterThan(RESPONSE_BODY_MAX_BYTES);
  });

  it('holds a try to its deadline while the name is still being looked up', async () => {
    const silentDns: Resolver = () => new Promise(() => undefined);
    const sut = new WebhookSender({ allowPrivateUrls: false, timeoutMs: 300 }, silentDns);
    const { outcome, ms } = await timed(sut, `http://hooks.example.com:${port}/hook`);
    expect(outcome).toEqual({ delivered: false, error: 'no complete answer within 300 ms' });
    expect(ms).toBeLessThan(3_000);
  });

  it('checks the addresses again at delivery: a name now resolving inside is not connected to', async () => {
    const sut = new WebhookSender({ allowPrivateUrls: false, timeoutMs: 2_000 }, rebinding);
    // what the name led to is for the worker's log (detail), not for the error its reader sees
    const outcome = await sut.send(delivery(`http://hooks.example.com:${port}/hook`));
    expect(outcome).toEqual({
      delivered: false,
      error: `refused: ${NOT_PUBLIC_HOST}`,
      detail: expect.stringContaining('127.0.0.1'),
    });
    // re-pointed at loopback spelled as an IPv4-compatible or -translated IPv6 address: refused too
    for (const address of ['::7f00:1', '::ffff:0:7f00:1']) {
      const rebound = new WebhookSender({ allowPrivateUrls: false, timeoutMs: 2_000 }, async () => [
        { address, family: 6 },
      ]);
      expect(await rebound.send(delivery(`http://hooks.example.com:${port}/hook`))).toEqual({
        delivered: false,
        error: `refused: ${NOT_PUBLIC_HOST}`,
        detail: expect.stringContaining(address),
      });
    }
    for (const literal of ['127.0.0.1', '[::127.0.0.1]', '[::ffff:0:127.0.0.1]'])
      expect(await sut.send(delivery(`http://${literal}:${port}/hook`))).toEqual({
        delivered: false,
        error: `refused: ${NOT_PUBLIC_HOST}`,
        detail: expect.stringMatching(/is not public$/),
      });
    expect(got).toEqual([]);
  });
});
