import { Registry } from 'prom-client';
import { LlmError } from '@parley/agent';
import { initialState } from '@parley/conversation';
import { FoldedConversation } from '../turns/conversation-folds';
import { historyCutsOf, modelErrorType, tokensByType, turnOutcomeOf, WorkerMetrics } from './worker-metrics';

const folded = (
  status: 'pending' | 'replied' | 'failed' | 'cancelled',
  postedAt = new Date(0),
): FoldedConversation => ({
  version: 3,
  state: { ...initialState(), status: 'active', turns: [{ turnId: 't1', messageId: 'm1', status }] },
  turns: [{ turnId: 't1', messageId: 'm1', content: 'q', postedAt, postedVersion: 2, iterations: [] }],
  lastEventId: undefined,
  startedBookId: null,
});

/** The registry's text for one metric's samples, as Prometheus would read them. */
async function samples(registry: Registry, name: string): Promise<string[]> {
  return (await registry.metrics()).split('\n').filter((l) => l.startsWith(name));
}

describe(WorkerMetrics.name, () => {
  it('names a model error by its code, a cancel as cancelled, anything else by its class', () => {
    expect(modelErrorType(new LlmError('slow down', 'rate_limited', true))).toBe('rate_limited');
    const abort = Object.assign(new Error('aborted'), { name: 'AbortError' });
    expect(modelErrorType(abort)).toBe('cancelled');
    expect(modelErrorType(new TypeError('x'))).toBe('TypeError');
    expect(modelErrorType('a string')).toBe('_OTHER');
  });

  it('always reports input and output tokens, the cache types only when used', () => {
    expect(
      tokensByType({ inputTokens: 10, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 }),
    ).toEqual([
      ['input', 10],
      ['output', 0],
    ]);
    expect(
      tokensByType({ inputTokens: 1, outputTokens: 2, cacheReadInputTokens: 3, cacheCreationInputTokens: 4 }),
    ).toEqual([
      ['input', 1],
      ['output', 2],
      ['cache_read', 3],
      ['cache_creation', 4],
    ]);
  });

  it('tells how a turn ended from the fold, nothing while it is open', () => {
    expect(turnOutcomeOf(folded('pending'), 't1')).toBeUndefined();
    expect(turnOutcomeOf(folded('cancelled'), 't1')).toBe('cancelled');
    expect(turnOutcomeOf(folded('replied'), 'another')).toBeUndefined();
  });

  it('finds history cuts among recorded events', () => {
    expect(historyCutsOf([{ type: 'HistorySummarized' }, { type: 'ToolInvoked' }, { type: 'HistoryTrimmed' }])).toEqual(
      ['summarized', 'trimmed'],
    );
  });

  it('records a model call in the GenAI conventions, with error_type only when it failed', async () => {
    const sut = new WorkerMetrics(new Registry());
    const labels = { provider: 'anthropic', model: 'claude-x' };
    const usage = { inputTokens: 100, outputTokens: 20, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 };
    sut.modelCall(labels, { seconds: 0.5, usage: [usage] });
    sut.modelCall(labels, { seconds: 0.1, error: new LlmError('busy', 'overloaded', true) });
    const counts = await samples(sut.registry, 'gen_ai_client_operation_duration_seconds_count');
    expect(counts).toEqual([
      'gen_ai_client_operation_duration_seconds_count{gen_ai_operation_name="chat",gen_ai_system="anthropic",gen_ai_provider_name="anthropic",gen_ai_request_model="claude-x"} 1',
      'gen_ai_client_operation_duration_seconds_count{gen_ai_operation_name="chat",gen_ai_system="anthropic",gen_ai_provider_name="anthropic",gen_ai_request_model="claude-x",error_type="overloaded"} 1',
    ]);
    const sums = await samples(sut.registry, 'gen_ai_client_token_usage_sum');
    expect(sums.map((l) => l.replace(/.*gen_ai_token_type="(\w+)"} /, '$1 '))).toEqual(['input 100', 'output 20']);
  });

  it('counts a reply and a cut as recorded, a cancel when the job finds it, and a failure with its code', async () => {
    const sut = new WorkerMetrics(new Registry());
    const postedAt = new Date(Date.now() - 2_000);
    sut.recorded({ postedAt }, [{ type: 'HistorySummarized' }, { type: 'AssistantReplied' }]);
    sut.jobEnded(folded('replied', postedAt), 't1'); // counted when recorded: not again
    sut.jobEnded(folded('cancelled', postedAt), 't1');
    sut.turnEnded('failed', 'rate_limited', postedAt);
    expect(await samples(sut.registry, 'parley_turns_total')).toEqual([
      'parley_turns_total{outcome="replied",code=""} 1',
      'parley_turns_total{outcome="cancelled",code=""} 1',
      'parley_turns_total{outcome="failed",code="rate_limited"} 1',
    ]);
    expect(await samples(sut.registry, 'parley_history_cuts_total')).toEqual([
      'parley_history_cuts_total{mode="summarized"} 1',
    ]);
    const [replied] = await samples(sut.registry, 'parley_turn_duration_seconds_sum{outcome="replied"}');
    expect(Number(replied.split(' ')[1])).toBeGreaterThanOrEqual(2);
  });
});
