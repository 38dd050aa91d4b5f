import { ChatOptions, ChatOutcome, LlmClient, LlmError, LlmMessage, LlmToolSpec, ModelCapabilities } from './llm.types';
import { ModelToolSupport } from './model-tool-support';
import { TOOLS_UNSUPPORTED } from './openai.llm';
import { PriceTable } from './price-table';

/**
 * Several providers at once: each call goes to the provider the model table ties its model to
 * (LLM_PRICES' `provider`), so one conversation runs on Claude and another on an OpenAI or a
 * self-hosted model. A model the table does not name (a policy recorded before its price was
 * removed) goes to the default provider. Tool use is asked per model: a refusal of tools is
 * learned (ModelToolSupport) and the call fails with `llm_tools_unsupported`, which the turn
 * answers by searching first; a model known to lack tools is not asked with tools again.
 */
export class ProviderRouter implements LlmClient {
  /** true only where every provider's models surely use tools: a Chat Completions server may refuse them */
  readonly everyModelTakesTools: boolean;

  constructor(
    private readonly clients: ReadonlyMap<string, LlmClient>,
    private readonly defaults: { provider: string; model: string },
    private readonly table: PriceTable,
    private readonly toolSupport: ModelToolSupport,
  ) {
    this.everyModelTakesTools = [...clients.values()].every((c) => c.everyModelTakesTools);
  }

  /**
   * The model's provider's answer, tool use as learned for the model besides; a model whose
   * provider this server does not talk to can do nothing here (its calls fail).
   */
  capabilitiesOf(model: string | undefined): ModelCapabilities {
    const id = model ?? this.defaults.model;
    const provider = this.providerOf(id);
    const client = this.clients.get(provider);
    if (!client) return { provider, tools: false, documents: false, batches: false };
    const served = client.capabilitiesOf(id);
    return { ...served, tools: served.tools && this.toolSupport.supports(id) };
  }

  private providerOf(model: string): string {
    return this.table.providerOf(model) ?? this.defaults.provider;
  }

  async chatWithTools(messages: LlmMessage[], tools: LlmToolSpec[], options: ChatOptions): Promise<ChatOutcome> {
    const model = options.model ?? this.defaults.model;
    const provider = this.providerOf(model);
    const client = this.clients.get(provider);
    if (!client)
      throw new LlmError(
        `model ${model} runs on ${provider}, which this server does not talk to (LLM_PROVIDERS)`,
        'llm_provider_unavailable',
        false,
      );
    if (tools.length && !(await this.toolSupport.stillSupports(model)))
      throw new LlmError(
        `model ${model} does not support tools (learned from an earlier refusal)`,
        TOOLS_UNSUPPORTED,
        false,
      );
    // a provider without a batch API answers a batch's call as any other
    const viaBatch = client.capabilitiesOf(model).batches ? options.viaBatch : undefined;
    try {
      return await client.chatWithTools(messages, tools, { ...options, model, viaBatch });
    } catch (e) {
      if (e instanceof LlmError && e.code === TOOLS_UNSUPPORTED) await this.toolSupport.learnRefusal(model, e.message);
      throw e;
    }
  }
}
