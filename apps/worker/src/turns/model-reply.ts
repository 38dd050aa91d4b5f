import {
  answerOf,
  ChatOptions,
  LiveDeltas,
  LlmClient,
  LlmMessage,
  LlmToolSpec,
  modelBatchSubmitted,
  modelReplied,
  TurnRecord,
} from '@parley/agent';
import { ConversationEvent } from '@parley/conversation';
import { NewEvent } from '@parley/event-store';
import { BookNames } from './book-names';
import { LoadedTurn, stepOrigin } from './conversation-folds';
import { DeltaBatcher } from './delta-batcher';
import { systemPrompt } from './system-prompt';

/** One answering model call of a turn, as the steps make it. */
export interface LlmCall {
  messages: LlmMessage[];
  /** the last message of the stable prefix (earlier turns), for a cache breakpoint */
  prefixEnd: number;
  tools: LlmToolSpec[];
  iteration: number;
  /** false on the last allowed call: it must answer with what it has */
  allowTools: boolean;
  signal: AbortSignal;
}

/** What a step came to: its events, or its model call still waiting in the provider's batch. */
export type StepResult =
  { kind: 'events'; events: NewEvent<ConversationEvent>[] } | { kind: 'wait-model-batch'; providerBatchId: string };

/**
 * An answering model call, streamed to the reader (or sent through the provider's batch), handed
 * to the builders: tool calls become ToolInvoked, a text answer AssistantReplied, a submitted
 * batch call ModelBatchSubmitted.
 */
export class ModelReply {
  constructor(
    private readonly llm: LlmClient,
    private readonly deltas: LiveDeltas,
    private readonly bookNames: BookNames,
  ) {}

  async reply(loaded: LoadedTurn, call: LlmCall): Promise<StepResult> {
    const { messages, prefixEnd, tools, iteration, allowTools, signal } = call;
    const turn = loaded.turn!;
    const deltas = new DeltaBatcher(this.deltas, loaded.ctx.conversationId, turn.turnId, iteration);
    const viaBatch = this.viaBatch(turn, iteration);
    let step: StepResult;
    try {
      const outcome = await this.llm.chatWithTools(messages, tools, {
        ...(await this.systemFor(loaded)),
        model: loaded.settings.model,
        prefixEnd,
        toolChoice: allowTools ? 'auto' : 'none',
        signal,
        onTextDelta: (text, attempt = 1) => deltas.add(text, attempt),
        viaBatch,
      });
      step = this.stepOf(loaded, call, viaBatch, outcome);
    } catch (e) {
      deltas.flush(); // what the reader saw of a call that broke stays shown
      throw e;
    }
    // an answer's last batch of text goes out in AssistantReplied, not a delta too
    if (step.kind === 'events' && step.events.some((e) => e.type === 'AssistantReplied')) deltas.discard();
    else deltas.flush();
    return step;
  }

  /** What the call's outcome makes of the step: wait for the provider's batch, or events. */
  private stepOf(
    loaded: LoadedTurn,
    { iteration, allowTools }: LlmCall,
    viaBatch: ChatOptions['viaBatch'],
    outcome: Awaited<ReturnType<LlmClient['chatWithTools']>>,
  ): StepResult {
    const turn = loaded.turn!;
    if (outcome.kind === 'pending') return { kind: 'wait-model-batch', providerBatchId: outcome.providerBatchId };
    if (outcome.kind === 'submitted' && viaBatch) {
      const { providerBatchId } = outcome;
      const submitted = { step: viaBatch.callId, provider: this.llm.provider, providerBatchId };
      return { kind: 'events', events: [modelBatchSubmitted(stepOrigin(loaded), turn.turnId, submitted)] };
    }
    const result = answerOf(outcome);
    return { kind: 'events', events: modelReplied(stepOrigin(loaded), turn, { iteration, allowTools }, result) };
  }

  /**
   * A batch prompt sent `via: message-batches` has its answering calls (not the small helper
   * calls: a reformulated query, a summary) go through the provider's Message Batches API.
   */
  private viaBatch(turn: TurnRecord, iteration: number): ChatOptions['viaBatch'] {
    if (turn.batch?.via !== 'message-batches' || !this.llm.supportsBatches) return undefined;
    const callId = replyCallId(turn.turnId, iteration);
    return { callId, providerBatchId: turn.modelBatches?.[callId] };
  }

  private async systemFor(loaded: LoadedTurn): Promise<{ system: string; systemTail: string }> {
    return systemPrompt(await this.bookNames.of(loaded), loaded.ctx.readingPosition, loaded.settings.instructions);
  }
}

/** The name an answering call of the turn goes by in a provider batch (TurnRecord.modelBatches). */
export const replyCallId = (turnId: string, iteration: number): string => `${turnId}/reply/${iteration}`;
