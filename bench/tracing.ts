/**
 * What tracing costs a turn: the same sequential turns (POST → AssistantReplied on SSE, the real
 * Anthropic SDK against the fake Messages API, no book: one model call a turn) on a stack without
 * OTEL_EXPORTER_OTLP_ENDPOINT, then on one exporting every span (http/protobuf, the default
 * sampler) to a local OTLP receiver, in the same run.
 */
import { FakeAnthropic } from '../test/support/fake-anthropic/fake-anthropic.server';
import { startOtlpReceiver } from '../test/support/otlp-receiver';
import { fakeAnthropicEnv } from '../test/support/stack';
import { add } from './report';
import { benchClient, liveConversation, withStack } from './service';
import { fmt, pct, secs } from './util';

async function sequentialTurns(env: Record<string, string>, n: number): Promise<number[]> {
  return withStack({ apis: 1, workers: 1, env }, async (stack) => {
    const one = await liveConversation(benchClient(stack));
    const lat: number[] = [];
    for (let i = 0; i < n + 10; i++) {
      const r = await one.turn(`question ${i}`);
      if (i >= 10) lat.push(r.ms); // the first turns warm the processes up
    }
    return lat;
  });
}

export async function tracingBench(): Promise<void> {
  const fake = await FakeAnthropic.start();
  const receiver = await startOtlpReceiver();
  try {
    const n = secs(200, 40);
    const env = fakeAnthropicEnv(fake.url);
    const off = await sequentialTurns(env, n);
    const on = await sequentialTurns(
      { ...env, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' },
      n,
    );
    for (const [p, label] of [
      [0.5, 'p50'],
      [0.99, 'p99'],
    ] as const) {
      const [a, b] = [pct(off, p), pct(on, p)];
      add({
        section: 'tracing',
        figure: `turn ${label} with tracing on (every span exported) vs off: POST → AssistantReplied on SSE, ${n} sequential, one model call`,
        value: `${fmt(b, 1)} ms (${b >= a ? '+' : ''}${fmt(b - a, 1)} ms)`,
        n: b - a,
        anchor: `${fmt(a, 1)} ms off`,
        ratio: b / a,
      });
    }
    add({
      section: 'tracing',
      figure: 'spans exported per turn (both processes)',
      value: fmt(receiver.spans.length / (n + 10), 1),
      n: receiver.spans.length / (n + 10),
    });
  } finally {
    await receiver.close();
    await fake.close();
  }
}
