import { context, trace } from '@opentelemetry/api';
import { loadTracingConfig } from '@parley/config';
import { traceFields } from './logger';
import { shutdownTracing, startTracing } from './tracing';

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
