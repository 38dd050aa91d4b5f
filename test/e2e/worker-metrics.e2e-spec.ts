import { randomUUID } from 'node:crypto';
import { expectProblem } from '../support/api';
import { conversationHelpers } from '../support/conversation-helpers';
import { Prometheus, startPrometheus } from '../support/prometheus';
import { clientFor, freePort } from '../support/stack';
import { useReaderStack } from '../support/use-stack';
import { waitFor } from '../support/wait-for';

/**
 * What an operator's Prometheus sees: a worker serving /metrics on WORKER_METRICS_PORT and the API
 * on METRICS_PORT, both scraped by Debian's real prometheus, after three turns on the fake Messages API.
 */
describe('worker metrics (e2e, scraped by a real Prometheus)', () => {
  let prometheus: Prometheus | undefined;
  let workerPort: number;
  let apiMetricsPort: number;
  const MODEL = 'claude-metrics-test';

  beforeAll(async () => {
    workerPort = await freePort();
    apiMetricsPort = await freePort();
  });
  afterAll(() => prometheus?.stop());
  const s = useReaderStack({
    env: () => ({
      WORKER_METRICS_PORT: String(workerPort),
      METRICS_PORT: String(apiMetricsPort),
      LLM_MODEL: MODEL,
      // a model of this test's own: priced, as every LLM_MODEL must be
      LLM_PRICES: JSON.stringify({ [MODEL]: { provider: 'anthropic', input: 2, output: 10 } }),
    }),
  });

  it('serves Prometheus text on the worker port, and nothing else there', async () => {
    const res = await waitFor('the worker metrics port', () =>
      fetch(`http://127.0.0.1:${workerPort}/metrics`).catch(() => undefined),
    );
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await res.text();
    expect(text).toContain('# TYPE gen_ai_client_operation_duration_seconds histogram');
    expect(text).toContain('# TYPE parley_turns_total counter');
    expect(text).toContain('process_cpu_user_seconds_total');
    expect((await fetch(`http://127.0.0.1:${workerPort}/other`)).status).toBe(404);
  });

  it('lets Prometheus read model calls and tokens by model after three turns, and a budget refusal from the API', async () => {
    const { conversation, ask } = s;
    const id = await conversation();
    for (const q of ['Who keeps the lamp?', 'What is in the logbook?', 'And the telescope?']) {
      const { ending } = await ask(id, q);
      expect(ending.type).toBe('AssistantReplied');
    }
    const broke = clientFor(s.stack.base, `reader-${randomUUID()}`, { claims: { parley_budget_usd_per_month: 0 } });
    const refusedId = await conversationHelpers(() => broke).conversation();
    const refused = await broke.api.POST('/v1/conversations/{id}/messages', {
      params: { path: { id: refusedId } },
      body: { content: 'anything' },
    });
    expect(expectProblem(refused, 402)).toMatchObject({ code: 'budget_exceeded' });

    prometheus = await startPrometheus({
      'parley-api': [`127.0.0.1:${apiMetricsPort}`],
      'parley-worker': [`127.0.0.1:${workerPort}`],
    });
    const p = prometheus;
    await waitFor(
      'both targets up',
      async () => {
        const targets = await p.targets();
        return targets.length === 2 && targets.every((t) => t.health === 'up') ? targets : undefined;
      },
      30_000,
      250,
    ).catch(async (e) => {
      throw new Error(`${(e as Error).message}\n${JSON.stringify(await p.targets())}`);
    });

    const calls = await waitFor(
      'model calls in Prometheus',
      async () => {
        const r = await p.query(
          'sum by (gen_ai_request_model, gen_ai_system) (gen_ai_client_operation_duration_seconds_count{gen_ai_operation_name="chat"})',
        );
        return r.length > 0 ? r : undefined;
      },
      15_000,
      250,
    );
    // each turn searched the book, then answered: two calls a turn
    expect(calls).toEqual([{ metric: { gen_ai_request_model: MODEL, gen_ai_system: 'anthropic' }, value: 6 }]);

    const tokens = await p.query('sum by (gen_ai_request_model, gen_ai_token_type) (gen_ai_client_token_usage_sum)');
    const byType = Object.fromEntries(tokens.map((t) => [t.metric.gen_ai_token_type, t]));
    for (const type of ['input', 'output']) {
      expect(byType[type]?.metric.gen_ai_request_model).toBe(MODEL);
      expect(byType[type].value).toBeGreaterThan(0);
    }

    const turns = await p.query('sum by (outcome) (parley_turns_total)');
    expect(turns).toEqual([{ metric: { outcome: 'replied' }, value: 3 }]);
    const tools = await p.query('sum by (tool, outcome) (parley_tool_call_duration_seconds_count)');
    expect(tools).toEqual([{ metric: { tool: 'search_book', outcome: 'ok' }, value: 3 }]);
    const refusals = await p.query('sum(parley_posts_budget_refused_total)');
    expect(refusals.map((r) => r.value)).toEqual([1]);
  }, 90_000);

  it('closes the port when the worker stops on SIGTERM', async () => {
    const [worker] = s.stack.workers;
    await worker.kill('SIGTERM');
    // not the SIGKILL kill() falls back on after 5 s: the open server held nothing up (Nest re-raises the SIGTERM)
    expect(worker.child.signalCode).toBe('SIGTERM');
    await expect(fetch(`http://127.0.0.1:${workerPort}/metrics`)).rejects.toThrow();
  });
});
