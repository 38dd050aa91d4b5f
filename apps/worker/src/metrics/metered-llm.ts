import {
  ChatOptions,
  ChatOutcome,
  LlmClient,
  LlmMessage,
  LlmToolSpec,
  stoppedAttemptsOf,
  WrappedLlm,
} from '@parley/agent';
import { WorkerMetrics } from './worker-metrics';

/**
 * The worker's LLM client with every call measured: the one object every model call of a turn
 * goes through (the agent's calls, the query, HyDE and summary helpers), so nothing is missed or
 * measured twice. A call put into a provider batch, or still waiting in one, is not a call yet.
 */
export class MeteredLlm extends WrappedLlm {
  constructor(
    inner: LlmClient,
    /** the model a call without `options.model` asks for */
    private readonly defaultModel: string,
    private readonly metrics: WorkerMetrics,
    private readonly clock: () => number = () => performance.now(),
  ) {
    super(inner);
  }

  async chatWithTools(messages: LlmMessage[], tools: LlmToolSpec[], options: ChatOptions): Promise<ChatOutcome> {
    const labels = { provider: this.capabilitiesOf(options.model).provider, model: options.model ?? this.defaultModel };
    const started = this.clock();
    const seconds = () => (this.clock() - started) / 1000;
    let outcome: ChatOutcome;
    try {
      outcome = await this.inner.chatWithTools(messages, tools, options);
    } catch (e) {
      this.metrics.modelCall(labels, { seconds: seconds(), usage: stoppedAttemptsOf(e).map((a) => a.usage), error: e });
      throw e;
    }
    if (outcome.kind !== 'answered') return outcome;
    const { result } = outcome;
    const attempts = (result.stoppedAttempts ?? []).map((a) => a.usage);
    // a batch's answer was fetched, not waited for: its duration says nothing of the model
    this.metrics.modelCall(labels, {
      seconds: result.batched ? undefined : seconds(),
      usage: [...attempts, result.usage],
    });
    return outcome;
  }
}
