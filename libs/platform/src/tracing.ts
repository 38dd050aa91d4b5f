import type { IncomingMessage } from 'node:http';
import type { NodeSDK, NodeSDKConfiguration } from '@opentelemetry/sdk-node';
import { loadTracingConfig, TracingConfig } from '@parley/config/config';
import { redactQueryString, redactUrl } from './redact-url';

/**
 * OpenTelemetry tracing for one process (docs/observability.md). Called first thing in main.ts:
 * the instrumentations patch http, Fastify, Nest, pg and ioredis as they are required, so they
 * must be registered before any of them is. Without OTEL_EXPORTER_OTLP_ENDPOINT nothing starts
 * and the SDK is not even loaded; the spans Parley makes itself then go to the API's no-op tracer.
 */

/** Probes and scrapes: a span each would drown the traces worth reading. */
const UNTRACED_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * Query parameters whose values a server span never records (instrumentation-http's `url.query`):
 * the instrumentation's own list, which an option replaces rather than extends, and the bearer
 * token EventSource clients and the queue board send as ?access_token=.
 */
export const REDACTED_QUERY_PARAMS = [
  'sig',
  'Signature',
  'AWSAccessKeyId',
  'X-Goog-Signature',
  'X-Amz-Signature',
  'X-Amz-Credential',
  'X-Amz-Security-Token',
  'access_token',
];

type SpanExporter = NodeSDKConfiguration['traceExporter'];
type ExportedSpan = Parameters<SpanExporter['export']>[0][number];
type Attributes = ExportedSpan['attributes'];

/** A value that may hold an access_token parameter, however its name is percent-encoded. */
const MAY_HOLD_TOKEN = /access(_|%5f)token/i;

/**
 * The attributes with every access_token value replaced, in any attribute that holds a URL or a
 * query string: @fastify/otel's `url.path` and the Nest instrumentation's `url.full` record the raw
 * request URL (the latter has no hook to change it), and instrumentation-http's `url.query` is
 * redacted by its own option too.
 */
export function redactAttributes(attributes: Attributes): Attributes {
  let redacted: Attributes | undefined;
  for (const [key, value] of Object.entries(attributes)) {
    if (typeof value !== 'string' || !MAY_HOLD_TOKEN.test(value)) continue;
    redacted ??= { ...attributes };
    redacted[key] = value.includes('?') ? redactUrl(value) : redactQueryString(value);
  }
  return redacted ?? attributes;
}

/** Exports through `exporter` every span with its attributes redacted (redactAttributes), whatever made it. */
export function redactingExporter(exporter: SpanExporter): SpanExporter {
  const redact = (span: ExportedSpan): ExportedSpan => {
    const attributes = redactAttributes(span.attributes);
    return attributes === span.attributes
      ? span
      : (Object.create(span, { attributes: { value: attributes, enumerable: true } }) as ExportedSpan);
  };
  return {
    export: (spans, done) => exporter.export(spans.map(redact), done),
    shutdown: () => exporter.shutdown(),
    forceFlush: () => exporter.forceFlush?.() ?? Promise.resolve(),
  };
}

let sdk: NodeSDK | undefined;

/** Starts tracing when an endpoint is configured; true when it did. */
export function startTracing(defaultServiceName: string, config: TracingConfig | null = loadTracingConfig()): boolean {
  if (!config || sdk) return sdk !== undefined;
  // required here, not imported: a process without tracing never loads the SDK
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { NodeSDK } = require('@opentelemetry/sdk-node') as typeof import('@opentelemetry/sdk-node');
  const { HttpInstrumentation } =
    require('@opentelemetry/instrumentation-http') as typeof import('@opentelemetry/instrumentation-http');
  const { FastifyOtelInstrumentation } = require('@fastify/otel') as typeof import('@fastify/otel');
  const { NestInstrumentation } =
    require('@opentelemetry/instrumentation-nestjs-core') as typeof import('@opentelemetry/instrumentation-nestjs-core');
  const { PgInstrumentation } =
    require('@opentelemetry/instrumentation-pg') as typeof import('@opentelemetry/instrumentation-pg');
  const { IORedisInstrumentation } =
    require('@opentelemetry/instrumentation-ioredis') as typeof import('@opentelemetry/instrumentation-ioredis');
  // each exporter reads OTEL_EXPORTER_OTLP_ENDPOINT (adding /v1/traces) and its headers itself
  const { OTLPTraceExporter } =
    config.protocol === 'http/json'
      ? (require('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http'))
      : (require('@opentelemetry/exporter-trace-otlp-proto') as typeof import('@opentelemetry/exporter-trace-otlp-proto'));
  /* eslint-enable @typescript-eslint/no-require-imports */
  sdk = new NodeSDK({
    serviceName: config.serviceName ?? defaultServiceName,
    // a BatchSpanProcessor around it, which reads OTEL_BSP_* itself; the sampler reads OTEL_TRACES_SAMPLER
    // every span's URL attributes lose their ?access_token= values on the way out
    traceExporter: redactingExporter(new OTLPTraceExporter()),
    // traces only: the SDK would otherwise export metrics and logs over OTLP too
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (req: IncomingMessage) => UNTRACED_PATHS.has((req.url ?? '').split('?')[0]),
        redactedQueryParamsServer: REDACTED_QUERY_PARAMS,
      }),
      // names the server span by its route; route handlers only: a span for each hook says little and costs a span each
      new FastifyOtelInstrumentation({
        registerOnInitialization: true,
        instrumentHooks: false,
        ignorePaths: (route: { url?: string }) => UNTRACED_PATHS.has(route.url ?? ''),
      }),
      new NestInstrumentation(),
      // statements and commands inside a trace only: the pollers, lock renewals and LISTEN would start a trace each
      // (and no span for taking a pooled connection: one per statement, and it says nothing)
      new PgInstrumentation({ requireParentSpan: true, ignoreConnectSpans: true }),
      // the command's name alone: its arguments hold job data (a kept answer) and delta text
      new IORedisInstrumentation({ requireParentSpan: true, dbStatementSerializer: (command: string) => command }),
    ],
  });
  sdk.start();
  return true;
}

/** Flushes the spans still buffered and stops exporting; called once the process stops. */
export async function shutdownTracing(): Promise<void> {
  const stopping = sdk;
  sdk = undefined;
  await stopping?.shutdown();
}
