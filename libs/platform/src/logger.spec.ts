import { Writable } from 'node:stream';
import pino from 'pino';
import { pinoHttpOptions } from './logger';
import { REDACTED } from './redact-url';

describe('pinoHttpOptions', () => {
  it('prints readable lines through pino-pretty with NODE_ENV=development, terminal or not', () => {
    const options = pinoHttpOptions({ env: 'development', logLevel: 'debug' }, 'api');
    expect(options.transport).toEqual({
      target: 'pino-pretty',
      options: expect.objectContaining({ singleLine: true }),
    });
    expect(options.level).toBe('debug');
    expect(() => require.resolve(options.transport!.target)).not.toThrow();
  });

  it('writes JSON lines with NODE_ENV=development where pino-pretty (a devDependency) is not installed', () => {
    const options = pinoHttpOptions({ env: 'development', logLevel: 'debug' }, 'api', () => false);
    expect(options.transport).toBeUndefined();
  });

  it.each(['production', 'test'] as const)('writes JSON lines with NODE_ENV=%s', (env) => {
    const options = pinoHttpOptions({ env, logLevel: 'info' }, 'worker');
    expect(options.transport).toBeUndefined();

    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const { transport: _none, autoLogging: _auto, serializers: _s, ...base } = options;
    pino(base, sink).info({ req: { headers: { authorization: 'Bearer secret' } } }, 'hello');
    const entry = JSON.parse(lines[0]) as Record<string, unknown>;
    expect(entry).toMatchObject({ msg: 'hello', component: 'worker', req: { headers: { authorization: REDACTED } } });
  });

  it('redacts every header that carries a credential, on requests and responses, and keeps the rest', () => {
    const {
      transport: _none,
      autoLogging: _auto,
      serializers: _s,
      ...base
    } = pinoHttpOptions({ env: 'production', logLevel: 'info' }, 'api');
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const token = 'eyJhbGciOiJIUzI1NiJ9.operator.sig';
    pino(base, sink).info(
      {
        req: {
          headers: {
            authorization: `Bearer ${token}`,
            'proxy-authorization': 'Basic dXNlcjpwYXNz',
            cookie: `parley_queue_board=${token}; other=1`,
            'user-agent': 'curl/8',
          },
        },
        res: {
          statusCode: 303,
          headers: { 'set-cookie': `parley_queue_board=${token}; Path=/admin/queues`, location: '/admin/queues' },
        },
      },
      'request completed',
    );
    expect(lines[0]).not.toContain(token);
    expect(lines[0]).not.toContain('dXNlcjpwYXNz');
    expect(JSON.parse(lines[0])).toMatchObject({
      req: {
        headers: { authorization: REDACTED, 'proxy-authorization': REDACTED, cookie: REDACTED, 'user-agent': 'curl/8' },
      },
      res: { headers: { 'set-cookie': REDACTED, location: '/admin/queues' } },
    });
  });

  it('skips request logs of the health and metrics endpoints', () => {
    const { autoLogging } = pinoHttpOptions({ env: 'production', logLevel: 'info' }, 'api');
    expect(autoLogging.ignore({ url: '/readyz' })).toBe(true);
    expect(autoLogging.ignore({ url: '/v1/books' })).toBe(false);
  });

  it("logs the client's address as Fastify's req.ip has it (X-Forwarded-For from a TRUST_PROXY peer), else the peer's", () => {
    const { req } = pinoHttpOptions({ env: 'production', logLevel: 'info' }, 'api').serializers;
    expect(req({ url: '/x', remoteAddress: '127.0.0.1', raw: { ip: '203.0.113.7' } }).remoteAddress).toBe(
      '203.0.113.7',
    );
    expect(req({ url: '/x', remoteAddress: '127.0.0.1', raw: {} }).remoteAddress).toBe('127.0.0.1');
  });
});
