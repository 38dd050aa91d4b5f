import { NodeSDK } from '@opentelemetry/sdk-node';

type SpanProcessor = NonNullable<ConstructorParameters<typeof NodeSDK>[0]>['spanProcessors'] & object;
export type EndedSpan = Parameters<SpanProcessor[number]['onEnd']>[0];

/**
 * The real OpenTelemetry SDK in this test process, keeping every span that ends (no exporter, no
 * instrumentations): `sdk.start()` before the spans, `sdk.shutdown()` after.
 */
export function recordedSpans(): { sdk: NodeSDK; ended: EndedSpan[] } {
  const ended: EndedSpan[] = [];
  const sdk = new NodeSDK({
    spanProcessors: [
      {
        onStart: () => undefined,
        onEnd: (s) => void ended.push(s),
        forceFlush: async () => {},
        shutdown: async () => {},
      },
    ],
    metricReaders: [],
    logRecordProcessors: [],
    resourceDetectors: [],
    instrumentations: [],
  });
  return { sdk, ended };
}
