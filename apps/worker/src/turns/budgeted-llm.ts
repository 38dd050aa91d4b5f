import { AsyncLocalStorage } from 'node:async_hooks';
import {
  ChatOptions,
  ChatOutcome,
  LlmClient,
  LlmMessage,
  LlmToolSpec,
  stoppedAttemptsOf,
  WrappedLlm,
} from '@parley/agent';
import { CallPayer, TurnBudget } from './turn-budget';

/** The payer of the step running in this async context (AgentTurnRunner sets it around a step). */
const payers = new AsyncLocalStorage<CallPayer>();

/**
 * The turn's model client with every call reserved against its payer's budget first, from the
 * request as it is about to be sent: the agent's calls, the query and HyDE, summaries, whole-book
 * answers all go through here, so none is bought unreserved. The payer comes from the step's
 * context rather than each caller (`paying`); without one (no budget) a call goes straight on.
 * Collecting an answer from a provider batch buys nothing: its submission was reserved.
 */
export class BudgetedLlm extends WrappedLlm {
  constructor(
    inner: LlmClient,
    private readonly budget: TurnBudget,
    /** the model and max_tokens of a call that does not say (LLM_MODEL, LLM_MAX_TOKENS) */
    private readonly defaults: { model: string; maxTokens: number },
  ) {
    super(inner);
  }

  /** Runs a step with its calls paid by `payer` (none: unbudgeted, nothing reserved). */
  static paying<T>(payer: CallPayer | undefined, step: () => Promise<T>): Promise<T> {
    return payer ? payers.run(payer, step) : step();
  }

  async chatWithTools(messages: LlmMessage[], tools: LlmToolSpec[], options: ChatOptions): Promise<ChatOutcome> {
    const payer = payers.getStore();
    if (!payer || options.viaBatch?.providerBatchId) return this.inner.chatWithTools(messages, tools, options);
    const request = {
      model: options.model ?? this.defaults.model,
      messages,
      tools,
      options,
      maxTokens: options.maxTokens ?? this.defaults.maxTokens,
    };
    const reservation = await this.budget.reserve(payer, request, { viaBatch: !!options.viaBatch });
    try {
      return await this.inner.chatWithTools(messages, tools, options);
    } catch (e) {
      // billed in part: the runner's ModelCallStopped settles it; nothing billed, nothing to hold
      if (reservation && stoppedAttemptsOf(e).length === 0) await this.budget.release(reservation);
      throw e;
    }
  }
}
