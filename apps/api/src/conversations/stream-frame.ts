import { StoredEvent } from '@parley/event-store';
import { toEnvelope } from './event-envelope';

/** A stored event as SSE sends it, serialized once however many clients it is written to. */
export interface StreamFrame {
  version: number;
  type: string;
  /** the whole frame (`id:`, `event:`, `data:`, blank line) as bytes: a Buffer is written to a
   * socket several times faster than a string, which would be encoded again for every client */
  bytes: Buffer;
  /** the span the event was written under (its metadata's), for the delivery span's links */
  traceparent?: string;
}

export function toStreamFrame(e: StoredEvent): StreamFrame {
  return {
    version: e.version,
    type: e.type,
    bytes: Buffer.from(`id: ${e.version}\nevent: ${e.type}\ndata: ${JSON.stringify(toEnvelope(e))}\n\n`),
    ...(typeof e.metadata.traceparent === 'string' ? { traceparent: e.metadata.traceparent } : {}),
  };
}
