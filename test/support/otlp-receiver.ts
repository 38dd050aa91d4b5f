/**
 * A test OTLP/HTTP receiver: what a collector does with the real exporters' requests, as far as
 * the tests need it. POST /v1/traces in JSON (http/json) or protobuf (http/protobuf, decoded
 * with the official proto's messages below, cut to the fields read here); other signals are
 * answered and dropped.
 */
import http from 'node:http';
import net from 'node:net';
import { gunzipSync } from 'node:zlib';
import protobuf from 'protobufjs';
import { waitFor } from './wait-for';

/** opentelemetry-proto's collector/trace/v1, trace/v1, common/v1 and resource/v1, field numbers as published. */
const OTLP_TRACE_PROTO = `
syntax = "proto3";
package otlp;
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; string schema_url = 3; }
message Resource { repeated KeyValue attributes = 1; uint32 dropped_attributes_count = 2; }
message ScopeSpans { InstrumentationScope scope = 1; repeated Span spans = 2; string schema_url = 3; }
message InstrumentationScope { string name = 1; string version = 2; }
message Span {
  bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; bytes parent_span_id = 4;
  string name = 5; int32 kind = 6; fixed64 start_time_unix_nano = 7; fixed64 end_time_unix_nano = 8;
  repeated KeyValue attributes = 9; repeated Link links = 13; Status status = 15; fixed32 flags = 16;
}
message Link { bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; repeated KeyValue attributes = 4; }
message Status { string message = 2; int32 code = 3; }
message KeyValue { string key = 1; AnyValue value = 2; }
message AnyValue {
  oneof value {
    string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4;
    ArrayValue array_value = 5; KeyValueList kvlist_value = 6; bytes bytes_value = 7;
  }
}
message ArrayValue { repeated AnyValue values = 1; }
message KeyValueList { repeated KeyValue values = 1; }
`;
const ExportTraceServiceRequest = protobuf.parse(OTLP_TRACE_PROTO).root.lookupType('otlp.ExportTraceServiceRequest');

export type AttrValue = string | number | boolean | AttrValue[] | undefined;

/** One received span, flattened: its resource's attributes beside its own. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer */
  kind: number;
  attributes: Record<string, AttrValue>;
  resource: Record<string, AttrValue>;
  links: Array<{ traceId: string; spanId: string }>;
  status: { code: number; message?: string };
  /** the request's Content-Type */
  contentType: string;
}

export interface OtlpReceiver {
  url: string;
  spans: ReceivedSpan[];
  /** how many /v1/traces requests came in, by content type */
  requests: Record<string, number>;
  /** every span of a trace, once `until` holds for them (bounded by `timeoutMs`) */
  trace(traceId: string, until: (spans: ReceivedSpan[]) => boolean, timeoutMs?: number): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const requests: Record<string, number> = {};
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const contentType = (req.headers['content-type'] ?? '').split(';')[0].trim();
      try {
        let body = Buffer.concat(chunks);
        if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
        if (req.url === '/v1/traces') {
          requests[contentType] = (requests[contentType] ?? 0) + 1;
          spans.push(...decode(body, contentType));
        }
        res.writeHead(200, { 'content-type': contentType || 'application/json' });
        res.end(contentType === 'application/x-protobuf' ? Buffer.alloc(0) : '{}');
      } catch (e) {
        res.writeHead(400, { 'content-type': 'text/plain' });
        res.end(String(e));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    requests,
    trace: (traceId, until, timeoutMs = 20_000) =>
      waitFor(
        `spans of trace ${traceId}`,
        async () => {
          const found = spans.filter((s) => s.traceId === traceId);
          return until(found) ? found : undefined;
        },
        timeoutMs,
      ),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function decode(body: Buffer, contentType: string): ReceivedSpan[] {
  if (contentType === 'application/x-protobuf') {
    const message = ExportTraceServiceRequest.decode(body);
    // no defaults: a oneof's member is there only when it was sent, so the set one is the one there
    const request = ExportTraceServiceRequest.toObject(message, { longs: Number, bytes: Buffer });
    return flatten(request as OtlpRequest, contentType, (b) => (b ? Buffer.from(b as Uint8Array).toString('hex') : ''));
  }
  if (contentType === 'application/json') {
    return flatten(JSON.parse(body.toString()) as OtlpRequest, contentType, (s) => String(s ?? ''));
  }
  throw new Error(`unexpected content type ${contentType}`);
}

/** The request's shape, in JSON's camelCase as protobufjs's toObject also gives it. */
interface OtlpRequest {
  resourceSpans?: Array<{
    resource?: { attributes?: KeyValue[] };
    scopeSpans?: Array<{
      spans?: Array<{
        traceId: unknown;
        spanId: unknown;
        parentSpanId?: unknown;
        name: string;
        kind?: number;
        attributes?: KeyValue[];
        links?: Array<{ traceId: unknown; spanId: unknown }>;
        status?: { code?: number; message?: string };
      }>;
    }>;
  }>;
}
interface KeyValue {
  key: string;
  value?: AnyValue;
}
interface AnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: number | string;
  doubleValue?: number;
  arrayValue?: { values?: AnyValue[] };
}

function flatten(request: OtlpRequest, contentType: string, id: (raw: unknown) => string): ReceivedSpan[] {
  return (request.resourceSpans ?? []).flatMap((rs) => {
    const resource = attributesOf(rs.resource?.attributes);
    return (rs.scopeSpans ?? []).flatMap((ss) =>
      (ss.spans ?? []).map((s) => ({
        traceId: id(s.traceId),
        spanId: id(s.spanId),
        parentSpanId: id(s.parentSpanId),
        name: s.name,
        kind: s.kind ?? 0,
        attributes: attributesOf(s.attributes),
        resource,
        links: (s.links ?? []).map((l) => ({ traceId: id(l.traceId), spanId: id(l.spanId) })),
        status: { code: s.status?.code ?? 0, message: s.status?.message },
        contentType,
      })),
    );
  });
}

function attributesOf(kvs: KeyValue[] = []): Record<string, AttrValue> {
  return Object.fromEntries(kvs.map((kv) => [kv.key, valueOf(kv.value)]));
}

function valueOf(v: AnyValue | undefined): AttrValue {
  if (!v) return undefined;
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.arrayValue !== undefined) return (v.arrayValue.values ?? []).map(valueOf);
  return undefined;
}
