import { trace } from '@opentelemetry/api';
import { contextOf, currentTraceparent, linksOf, spanContextOf, traceMetadata } from './trace-context';

describe('trace context in the log', () => {
  const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

  it('reads a stored traceparent as a remote parent, and refuses what is not one', () => {
    expect(spanContextOf(traceparent)).toEqual({
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      spanId: '00f067aa0ba902b7',
      traceFlags: 1,
      isRemote: true,
    });
    expect(trace.getSpanContext(contextOf(traceparent))?.spanId).toBe('00f067aa0ba902b7');
    for (const bad of [undefined, 42, '', '00-0000000000000000000000000000000-00f067aa0ba902b7-01', 'garbage'])
      expect(spanContextOf(bad)).toBeUndefined();
    expect(trace.getSpanContext(contextOf(undefined))).toBeUndefined();
  });

  it('stamps nothing outside a span (tracing off: older events and these look alike)', () => {
    expect(currentTraceparent()).toBeUndefined();
    expect(traceMetadata()).toEqual({});
  });

  it('links a batch once per trace', () => {
    const other = '00-11111111111111111111111111111111-2222222222222222-00';
    const links = linksOf([
      { metadata: { traceparent } },
      { metadata: { traceparent } },
      { metadata: {} },
      { metadata: { traceparent: other } },
    ]);
    expect(links.map((l) => l.context.traceId)).toEqual([
      '4bf92f3577b34da6a3ce929d0e0e4736',
      '11111111111111111111111111111111',
    ]);
  });
});
