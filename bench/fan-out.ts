/**
 * SSE fan-out (kept from the first bench until bench/sse-fanout.ts replaces it): `clients`
 * streams on one conversation receive one event; the API's RSS before and after opening them.
 */
import { add } from './report';
import { benchClient, newConversation, withStack } from './service';
import { fmt, openSse, pct, rssMb } from './util';

export async function fanOutBench(clients = 500): Promise<void> {
  await withStack({ apis: 1, workers: 1, env: { LLM_PROVIDER: 'scripted' } }, async (stack) => {
    const alice = benchClient(stack);
    const id = await newConversation(alice);
    const version = (await alice.req('GET', `/v1/conversations/${id}`)).body.version as number;
    const apiPid = stack.apis[0].child.pid!;
    const rssBefore = rssMb(apiPid);
    let renamedAt = 0;
    const arrivals: number[] = [];
    let allIn: () => void = () => undefined;
    const all = new Promise<void>((r) => (allIn = r));
    const streams = await Promise.all(
      Array.from({ length: clients }, () =>
        openSse(`${stack.base}/v1/conversations/${id}/stream?after=${version}`, alice.auth, (f) => {
          if (f.event !== 'ConversationRenamed') return;
          arrivals.push(performance.now() - renamedAt);
          if (arrivals.length === clients) allIn();
        }),
      ),
    );
    try {
      const rssOpen = rssMb(apiPid);
      renamedAt = performance.now();
      await alice.req('PATCH', `/v1/conversations/${id}`, { title: 'fan-out' });
      await Promise.race([all, new Promise((r) => setTimeout(r, 30_000))]);
      add({
        section: 'sse',
        figure: `SSE fan-out: ${clients} clients on one conversation`,
        value: `${arrivals.length}/${clients} received, all within ${fmt(Math.max(...arrivals), 0)} ms (p50 ${fmt(pct(arrivals, 0.5), 0)} ms)`,
        n: Math.max(...arrivals),
      });
      add({
        section: 'sse',
        figure: `API RSS with ${clients} open SSE streams`,
        value: `${fmt(rssOpen, 0)} MB (${fmt(rssBefore, 0)} MB before, ${fmt(((rssOpen - rssBefore) * 1024) / clients, 0)} KB a stream)`,
        n: rssOpen,
      });
    } finally {
      streams.forEach((s) => s.close());
    }
  });
}
