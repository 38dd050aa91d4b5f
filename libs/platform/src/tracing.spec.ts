import { context, trace } from '@opentelemetry/api';
import { loadTracingConfig } from '@parley/config';
import { traceFields } from './logger';
import { REDACTED } from './redact-url';
import { redactAttributes, redactingExporter, shutdownTracing, startTracing } from './tracing';

// with an endpoint, tracing is tested on the real processes (test/e2e/tracing.e2e-spec.ts): the
// exporter loads node:http by a dynamic import, which Jest's module system does not run
describe('startTracing', () => {
  afterEach(async () => {
    await shutdownTracing();
    trace.disable();
    context.disable();
  });

  it('starts nothing without OTEL_EXPORTER_OTLP_ENDPOINT: no provider, no context, no log fields', () => {
    expect(loadTracingConfig({})).toBeNull();
    expect(startTracing('parley-api', loadTracingConfig({}))).toBe(false);

    trace.getTracer('t').startActiveSpan('work', (span) => {
      expect(span.isRecording()).toBe(false);
      expect(trace.getActiveSpan()).toBeUndefined(); // the API's no-op context manager keeps nothing
      expect(traceFields()).toEqual({});
      span.end();
    });
  });

  it('refuses a protocol it cannot export with', () => {
    expect(() =>
      loadTracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }),
    ).toThrow(/OTEL_EXPORTER_OTLP_PROTOCOL/);
  });
});

describe(redactAttributes.name, () => {
  const token = 'eyJhbGciOiJIUzI1NiJ9.e30.sig';

  it('replaces every access_token value in the attributes that hold a URL or a query, whoever set them', () => {
    const attributes = {
      'url.full': `/v1/conversations/c/stream?access_token=${token}&after=3`, // the Nest instrumentation's
      'url.path': `/admin/queues?access%5Ftoken=${token}`, // @fastify/otel's
      'url.query': `access_token=${token}&access_token=${token}`,
      'http.route': '/v1/conversations/:id/stream',
      'http.response.status_code': 200,
    };
    const redacted = redactAttributes(attributes);
    expect(JSON.stringify(redacted)).not.toContain(token);
    expect(redacted).toEqual({
      'url.full': `/v1/conversations/c/stream?access_token=${REDACTED}&after=3`,
      'url.path': `/admin/queues?access%5Ftoken=${REDACTED}`,
      'url.query': `access_token=${REDACTED}&access_token=${REDACTED}`,
      'http.route': '/v1/conversations/:id/stream',
      'http.response.status_code': 200,
    });
    expect(attributes['url.full']).toContain(token); // the span's own attributes are left as they are
  });

  it('returns the same attributes when nothing holds a token', () => {
    const attributes = { 'url.full': '/v1/books?limit=3', 'db.system': 'postgresql' };
    expect(redactAttributes(attributes)).toBe(attributes);
  });
});

describe(redactingExporter.name, () => {
  it('hands the inner exporter each span with its attributes redacted, the rest of the span intact', () => {
    const exported: Array<{ name: string; attributes: Record<string, unknown>; spanContext(): unknown }> = [];
    const inner = {
      export: (spans: unknown[], done: (r: { code: number }) => void) => {
        exported.push(...(spans as typeof exported));
        done({ code: 0 });
      },
      shutdown: () => Promise.resolve(),
    };
    class FakeSpan {
      name = 'GET /v1/conversations/:id/stream';
      attributes = { 'url.full': '/v1/conversations/c/stream?access_token=secret-token' };
      spanContext() {
        return { traceId: 't' };
      }
    }
    const sut = redactingExporter(inner as never);
    const done = jest.fn();
    sut.export([new FakeSpan()] as never, done);
    expect(done).toHaveBeenCalledWith({ code: 0 });
    expect(exported[0].name).toBe('GET /v1/conversations/:id/stream');
    expect(exported[0].spanContext()).toEqual({ traceId: 't' });
    expect(exported[0].attributes).toEqual({ 'url.full': `/v1/conversations/c/stream?access_token=${REDACTED}` });
  });
});
