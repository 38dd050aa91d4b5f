import { TracingEnv } from './env';

/** Tracing (docs/observability.md): null when OTEL_EXPORTER_OTLP_ENDPOINT is unset, and nothing starts. */
export interface TracingConfig {
  endpoint: string;
  protocol: 'http/protobuf' | 'http/json';
  /** OTEL_SERVICE_NAME, else the process's own (parley-api, parley-worker) */
  serviceName?: string;
  /** prompts and answers on the model-call spans (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT) */
  captureContent: boolean;
}

export function tracingConfig(e: TracingEnv): TracingConfig | null {
  if (!e.OTEL_EXPORTER_OTLP_ENDPOINT) return null;
  return {
    endpoint: e.OTEL_EXPORTER_OTLP_ENDPOINT,
    protocol: e.OTEL_EXPORTER_OTLP_PROTOCOL,
    serviceName: e.OTEL_SERVICE_NAME,
    captureContent: e.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT,
  };
}
