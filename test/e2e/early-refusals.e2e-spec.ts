/**
 * What the built API answers before it reads a body (issue 39): a request without a valid token
 * is refused from its headers, so its body, however large once inflated, is never read; and an
 * answer sent while a body is still arriving (a 401, a 413 for a body declared too long, a 404)
 * closes the connection instead of reading off the rest. Measured from outside: raw sockets that
 * send part of a body and wait, and the API's resident memory from /proc.
 */
import net from 'node:net';
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { freePort, startStack, tokenFor, type Stack } from '../support/stack';

const MiB = 1024 * 1024;

function rss(pid: number): number {
  return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'latin1'))![1]) * 1024;
}

interface RawAnswer {
  /** the status line and headers, lower-cased names */
  status: number;
  headers: Record<string, string>;
  body: string;
  /** the server closed the connection within the wait */
  closed: boolean;
}

/**
 * Sends `head` (a request's start line and headers) and `body` on a raw socket, sends nothing more,
 * and waits up to `waitMs` for the server to answer and close the connection.
 */
function sendPartial(base: string, head: string, body: Buffer | string, waitMs = 8_000): Promise<RawAnswer> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    let closed = false;
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      const text = Buffer.concat(chunks).toString('latin1');
      const [top, ...rest] = text.split('\r\n\r\n');
      const [statusLine, ...lines] = (top ?? '').split('\r\n');
      const headers = Object.fromEntries(
        lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
      );
      resolve({ status: Number(statusLine.split(' ')[1] ?? 0), headers, body: rest.join('\r\n\r\n'), closed });
    };
    const timer = setTimeout(done, waitMs);
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.on('end', () => {
      closed = true;
      done();
    });
    socket.on('error', (e: NodeJS.ErrnoException) => (e.code === 'ECONNRESET' ? done() : reject(e)));
    socket.write(head.replace(/\n/g, '\r\n') + '\r\n\r\n');
    socket.write(body);
  });
}

const head = (method: string, path: string, headers: Record<string, string | number>) =>
  [`${method} ${path} HTTP/1.1`, 'host: localhost', ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)].join(
    '\n',
  );

describe('refusals before the body (e2e)', () => {
  let stack: Stack;
  let metricsPort: number;
  beforeAll(async () => {
    metricsPort = await freePort();
    stack = await startStack({ workers: 0, env: { METRICS_PORT: String(metricsPort) } });
  }, 60_000);
  /** parley_http_request_duration_seconds' count of answers with this status, any route */
  const answered = async (status: number): Promise<number> => {
    const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    return [
      ...text.matchAll(
        new RegExp(`^parley_http_request_duration_seconds_count\\{[^}]*status="${status}"[^}]*\\} (\\d+)`, 'gm'),
      ),
    ]
      .map((m) => Number(m[1]))
      .reduce((a, b) => a + b, 0);
  };
  afterAll(() => stack?.stop());

  const json = { 'content-type': 'application/json' };
  const form = { 'content-type': 'multipart/form-data; boundary=xyz' };
  const formStart = '--xyz\r\ncontent-disposition: form-data; name="file"; filename="a.txt"\r\n\r\nCHAPTER I.\n';

  it.each([
    ['no token', {}, 'token_missing'],
    ['a forged token', { authorization: `Bearer ${tokenFor('mallory', { secret: 'y'.repeat(32) })}` }, 'token_invalid'],
    ['an expired token', { authorization: `Bearer ${tokenFor('ann', { ttlSeconds: -60 })}` }, 'token_expired'],
  ])(
    'answers a JSON or multipart request with %s 401 from its headers, and closes, while its body is still to come',
    async (_label, auth, code) => {
      for (const [path, type, start] of [
        ['/v1/conversations', json, '{"title":"'],
        ['/v1/books', json, '{"format":"text","content":"'],
        ['/v1/books', form, formStart],
      ] as const) {
        const answer = await sendPartial(
          stack.base,
          head('POST', path, { ...type, ...auth, 'content-length': 50 * MiB }),
          start,
        );
        expect([path, type['content-type'], answer.status, answer.closed]).toEqual([
          path,
          type['content-type'],
          401,
          true,
        ]);
        expect(answer.headers['content-type']).toContain('application/problem+json');
        expect(answer.headers.connection).toBe('close');
        expect(JSON.parse(answer.body)).toMatchObject({ code, status: 401 });
      }
    },
    30_000,
  );

  it('never inflates an anonymous gzip body: six 27 MiB bombs are 401 and the API does not grow', async () => {
    const pid = stack.apis[0].child.pid!;
    const bomb = gzipSync(Buffer.from(`{"format":"text","content":"${'a'.repeat(27 * MiB)}"}`));
    expect(bomb.length).toBeLessThan(MiB);
    const before = rss(pid);
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, rss(pid))), 20);
    try {
      const forged = `Bearer ${tokenFor('mallory', { secret: 'y'.repeat(32) })}`;
      const statuses = await Promise.all(
        Array.from({ length: 6 }, (_, i) =>
          fetch(`${stack.base}/v1/books`, {
            method: 'POST',
            headers: { ...json, 'content-encoding': 'gzip', ...(i % 2 ? { authorization: forged } : {}) },
            body: bomb,
          }).then(async (r) => [r.status, ((await r.json()) as { code: string }).code]),
        ),
      );
      expect(statuses).toEqual(Array.from({ length: 6 }, (_, i) => [401, i % 2 ? 'token_invalid' : 'token_missing']));
    } finally {
      clearInterval(sampler);
    }
    // inflated and parsed, six such bodies cost the API hundreds of MiB
    expect(peak - before).toBeLessThan(60 * MiB);
  }, 60_000);

  it('counts the answers refused before their body in the HTTP metrics', async () => {
    const before = await answered(401);
    const refusals = 12;
    await Promise.all(
      Array.from({ length: refusals }, () =>
        sendPartial(
          stack.base,
          head('POST', '/v1/conversations', { ...json, 'content-length': 50 * MiB }),
          '{"title":"',
        ),
      ),
    );
    expect((await answered(401)) - before).toBe(refusals);
  }, 30_000);

  it("keeps the large body limit to a book's upload: any other route's JSON is held to 1 MiB", async () => {
    const auth = { authorization: `Bearer ${tokenFor('ann')}` };
    const id = '00000000-0000-4000-8000-000000000000';
    for (const [method, path] of [
      ['PATCH', `/v1/books/${id}`],
      ['POST', '/v1/webhooks'],
      ['PATCH', '/v1/conversations/' + id],
    ] as const) {
      const answer = await sendPartial(
        stack.base,
        head(method, path, { ...json, ...auth, 'content-length': 2 * MiB }),
        '{"title":"' + 'x'.repeat(1024),
      );
      expect([method, path, answer.status]).toEqual([method, path, 413]);
    }
  }, 30_000);

  it('answers 413 to a body declared too long at once, and closes, rather than reading it off', async () => {
    const auth = { authorization: `Bearer ${tokenFor('ann')}` };
    for (const path of ['/v1/conversations', '/v1/books']) {
      const answer = await sendPartial(
        stack.base,
        head('POST', path, { ...json, ...auth, 'content-length': '10000000000' }),
        '{"title":"' + 'x'.repeat(1024),
      );
      expect([path, answer.status, answer.closed]).toEqual([path, 413, true]);
      expect(answer.headers.connection).toBe('close');
      expect(JSON.parse(answer.body)).toMatchObject({ status: 413 });
    }
  }, 30_000);

  it('answers 413 once a gzip body inflates past the limit, and closes while the rest is still to come', async () => {
    const auth = { authorization: `Bearer ${tokenFor('ann')}` };
    const start = gzipSync(Buffer.from(`{"title":"${'x'.repeat(2 * MiB)}`));
    const answer = await sendPartial(
      stack.base,
      head('POST', '/v1/conversations', { ...json, ...auth, 'content-encoding': 'gzip', 'content-length': 50 * MiB }),
      start,
    );
    expect([answer.status, answer.closed]).toEqual([413, true]);
  }, 30_000);

  it('answers a body sent to no route 404 without reading it, and closes', async () => {
    const answer = await sendPartial(
      stack.base,
      head('POST', '/v1/nowhere', { ...json, 'content-length': '10000000000' }),
      '{"a":"',
    );
    expect([answer.status, answer.closed]).toEqual([404, true]);
  }, 30_000);

  it('keeps the connection of a request whose body was read whole, refused or not', async () => {
    const auth = { authorization: `Bearer ${tokenFor('ann')}` };
    const body = '{"title":';
    const answer = await sendPartial(
      stack.base,
      head('POST', '/v1/conversations', { ...json, ...auth, 'content-length': body.length }),
      body,
      1_000,
    );
    expect(answer.status).toBe(400);
    expect(answer.closed).toBe(false);
    expect(answer.headers.connection).toBe('keep-alive');
  }, 30_000);

  it('still takes ?access_token= on the event streams only, and public routes without a token', async () => {
    const token = tokenFor('ann');
    const id = '00000000-0000-4000-8000-000000000000';
    expect((await fetch(`${stack.base}/v1/conversations/${id}/stream?access_token=${token}`)).status).toBe(404);
    expect((await fetch(`${stack.base}/v1/conversations/${id}/stream`)).status).toBe(401);
    expect((await fetch(`${stack.base}/v1/conversations/${id}/events?access_token=${token}`)).status).toBe(401);
    expect((await fetch(`${stack.base}/v1/books?access_token=${token}`)).status).toBe(401);
    expect((await fetch(`${stack.base}/healthz`)).status).toBe(200);
    expect((await fetch(`${stack.base}/problems`)).status).toBe(200);
    expect((await fetch(`${stack.base}/docs-json`)).status).toBe(200);
  });
});
