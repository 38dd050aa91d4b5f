/**
 * What tracing costs a turn: the same sequential turns (POST → AssistantReplied on SSE, the real
 * Anthropic SDK against the fake Messages API, no book: one model call a turn) on a stack without
 * OTEL_EXPORTER_OTLP_ENDPOINT and on one exporting every span (http/protobuf, the default sampler
 * and batch settings) to a local OTLP receiver, in the same run.
 */
import { FakeAnthropic } from '../test/support/fake-anthropic/fake-anthropic.server';
import { startOtlpReceiver } from '../test/support/otlp-receiver';
import { fakeAnthropicEnv, type Stack } from '../test/support/stack';
import { add } from './report';
import { benchClient, liveConversation, withStack } from './service';
import { cpuMs, fmt, pct, secs } from './util';

/**
 * Both stacks up at once, their turns alternating (off, on, off, …): on a machine whose load moves
 * (other tests, other benches) both sides see the same load, where one side after the other did not.
 */
async function alternatingTurns(off: Record<string, string>, on: Record<string, string>, n: number) {
  return withStack({ apis: 1, workers: 1, env: off }, (a) =>
    withStack({ apis: 1, workers: 1, env: on }, async (b) => {
      const [x, y] = [await liveConversation(benchClient(a)), await liveConversation(benchClient(b))];
      const lat = { off: [] as number[], on: [] as number[], cpuOff: 0, cpuOn: 0 };
      const cpu = (st: Stack) => [...st.apis, ...st.workers].reduce((sum, p) => sum + cpuMs(p.child.pid!), 0);
      for (let i = 0; i < n + 10; i++) {
        if (i === 10) [lat.cpuOff, lat.cpuOn] = [-cpu(a), -cpu(b)]; // the first turns warm the processes up
        const [r, s] = [await x.turn(`question ${i}`), await y.turn(`question ${i}`)];
        if (i < 10) continue;
        lat.off.push(r.ms);
        lat.on.push(s.ms);
      }
      // CPU of the API and the worker a turn (the span exports included): what load does not skew
      [lat.cpuOff, lat.cpuOn] = [(lat.cpuOff + cpu(a)) / n, (lat.cpuOn + cpu(b)) / n];
      return lat;
    }),
  );
}

export async function tracingBench(): Promise<void> {
  const fake = await FakeAnthropic.start();
  const receiver = await startOtlpReceiver();
  try {
    const n = secs(200, 40);
    const env = fakeAnthropicEnv(fake.url);
    const tracing = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' };
    const { off, on, cpuOff, cpuOn } = await alternatingTurns(env, { ...env, ...tracing }, n);
    add({
      section: 'tracing',
      figure: 'CPU of the API and the worker per turn, tracing on vs off',
      value: `${fmt(cpuOn, 1)} ms (+${fmt(cpuOn - cpuOff, 1)} ms)`,
      n: cpuOn - cpuOff,
      anchor: `${fmt(cpuOff, 1)} ms off`,
      ratio: cpuOn / cpuOff,
    });
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
