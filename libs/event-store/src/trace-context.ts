import {
  Attributes,
  context,
  Context,
  isSpanContextValid,
  Link,
  ROOT_CONTEXT,
  Span,
  SpanContext,
  SpanKind,
  SpanStatusCode,
  trace,
  TraceFlags,
} from '@opentelemetry/api';

/**
 * W3C trace context as Parley keeps it: in each event's metadata (`traceparent`, the span it was
 * written under) and in each turn's job. With tracing off there is never an active span, so
 * nothing is stamped, and the spans below are the API's no-op ones.
 */

export const tracer = trace.getTracer('parley');

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The active span as a `traceparent` header value; undefined with no (valid) span active. */
export function currentTraceparent(): string | undefined {
  const sc = trace.getActiveSpan()?.spanContext();
  if (!sc || !isSpanContextValid(sc)) return undefined;
  return `00-${sc.traceId}-${sc.spanId}-0${(sc.traceFlags & TraceFlags.SAMPLED).toString(16)}`;
}

/** `{ traceparent }` to spread into an event's metadata or a job's data; `{}` outside a trace. */
export function traceMetadata(): { traceparent?: string } {
  const traceparent = currentTraceparent();
  return traceparent ? { traceparent } : {};
}

/** The span context a stored `traceparent` names (from another process: remote). */
export function spanContextOf(traceparent: unknown): SpanContext | undefined {
  const m = typeof traceparent === 'string' ? TRACEPARENT.exec(traceparent) : null;
  if (!m) return undefined;
  const sc = { traceId: m[1], spanId: m[2], traceFlags: parseInt(m[3], 16), isRemote: true };
  return isSpanContextValid(sc) ? sc : undefined;
}

/** A context whose parent is the stored `traceparent`; the root context when there is none. */
export function contextOf(traceparent: unknown): Context {
  const sc = spanContextOf(traceparent);
  return sc ? trace.setSpanContext(ROOT_CONTEXT, sc) : ROOT_CONTEXT;
}

/** At most this many links on one span: a batch of a thousand events links to the first ones. */
const MAX_LINKS = 32;

/** Links to the distinct traces of these events' metadata (a turn's events share one). */
export function linksOf(events: Array<{ metadata?: Record<string, unknown> }>): Link[] {
  const byTrace = new Map<string, Link>();
  for (const e of events) {
    const sc = spanContextOf(e.metadata?.traceparent);
    if (sc && !byTrace.has(sc.traceId)) byTrace.set(sc.traceId, { context: sc });
    if (byTrace.size >= MAX_LINKS) break;
  }
  return [...byTrace.values()];
}

/** Marks the span failed with the error's type (its name), as the semantic conventions ask. */
export function recordError(span: Span, e: unknown): void {
  const error = e instanceof Error ? e : new Error(String(e));
  span.recordException(error);
  span.setAttribute('error.type', (error as { code?: unknown }).code?.toString() ?? error.name);
  span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
}

/**
 * Runs `work` in a new active span, ended when `work` settles (failed with its error). `parent`:
 * the context to start from, else the active one.
 */
export function inSpan<T>(
  name: string,
  opts: { kind?: SpanKind; attributes?: Attributes; links?: Link[]; parent?: Context },
  work: (span: Span) => Promise<T>,
): Promise<T> {
  const { parent, ...options } = opts;
  return tracer.startActiveSpan(name, options, parent ?? context.active(), async (span) => {
    try {
      return await work(span);
    } catch (e) {
      recordError(span, e);
      throw e;
    } finally {
      span.end();
    }
  });
}
