import {
  AgentCommand,
  answerOf,
  ChatOptions,
  ChatResult,
  LiveDeltas,
  LlmClient,
  LlmMessage,
  LlmToolSpec,
  newStep,
  TurnRecord,
} from '@parley/agent';
import { Citation } from '@parley/conversation';
import { BookNames } from './book-names';
import { TurnView } from './conversation-folds';
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
  /** whole-book retrieval: its own system prompt, and the answer's citations from the provider's */
  wholeBook?: { system: string; cite: (result: ChatResult) => { content: string; citations: Citation[] } };
}

/** What a step came to: the command that records it, or its model call still waiting in the provider's batch. */
export type StepResult =
  { kind: 'command'; command: AgentCommand } | { kind: 'wait-model-batch'; providerBatchId: string };

export const recordWith = (command: AgentCommand): StepResult => ({ kind: 'command', command });

/**
 * An answering model call, streamed to the reader (or sent through the provider's batch), said
 * as the command that records it: its reply (tool calls or the answer), or its submission to a
 * provider batch.
 */
export class ModelReply {
  constructor(
    private readonly llm: LlmClient,
    private readonly deltas: LiveDeltas,
    private readonly bookNames: BookNames,
  ) {}

  async reply(view: TurnView, call: LlmCall): Promise<StepResult> {
    const { messages, prefixEnd, tools, iteration, allowTools, signal } = call;
    const { turn } = view;
    const deltas = new DeltaBatcher(this.deltas, view.ctx.conversationId, turn.turnId, iteration);
    const viaBatch = this.viaBatch(turn, view.settings.model, iteration);
    let step: StepResult;
    try {
      const outcome = await this.llm.chatWithTools(messages, tools, {
        ...(call.wholeBook ? { system: call.wholeBook.system } : await this.systemFor(view)),
        model: view.settings.model,
        prefixEnd,
        toolChoice: allowTools ? 'auto' : 'none',
        signal,
        onTextDelta: (text, attempt = 1) => deltas.add(text, attempt),
        viaBatch,
      });
      step = this.stepOf(view, call, viaBatch, outcome);
    } catch (e) {
      deltas.flush(); // what the reader saw of a call that broke stays shown
      throw e;
    }
    // an answer's last batch of text goes out in AssistantReplied, not a delta too
    if (step.kind === 'command' && answers(step.command)) deltas.discard();
    else deltas.flush();
    return step;
  }

  /** What the call's outcome makes of the step: wait for the provider's batch, or a command. */
  private stepOf(
    { turn, settings }: TurnView,
    { iteration, allowTools, wholeBook }: LlmCall,
    viaBatch: ChatOptions['viaBatch'],
    outcome: Awaited<ReturnType<LlmClient['chatWithTools']>>,
  ): StepResult {
    if (outcome.kind === 'pending') return { kind: 'wait-model-batch', providerBatchId: outcome.providerBatchId };
    if (outcome.kind === 'submitted' && viaBatch) {
      const { providerBatchId } = outcome;
      const submitted = {
        step: viaBatch.callId,
        provider: this.llm.capabilitiesOf(settings.model).provider,
        providerBatchId,
      };
      return recordWith({ type: 'RecordModelBatchSubmission', turnId: turn.turnId, ...newStep(), submitted });
    }
    const result = answerOf(outcome);
    // whole-book: the answer as the provider's citations of the documents sent say it (resolved here, where they are known)
    const cited = wholeBook?.cite(result);
    return recordWith({
      type: 'RecordModelReply',
      turnId: turn.turnId,
      ...newStep(),
      iteration,
      allowTools,
      result,
      ...(cited ? { cited } : {}),
    });
  }

  /**
   * A batch prompt sent `via: message-batches` has its answering calls (not the small helper
   * calls: a reformulated query, a summary) go through the provider's Message Batches API.
   */
  private viaBatch(turn: TurnRecord, model: string | undefined, iteration: number): ChatOptions['viaBatch'] {
    if (turn.batch?.via !== 'message-batches' || !this.llm.capabilitiesOf(model).batches) return undefined;
    const callId = replyCallId(turn.turnId, iteration);
    return { callId, providerBatchId: turn.modelBatches?.[callId] };
  }

  private async systemFor(view: TurnView): Promise<{ system: string; systemTail: string }> {
    return systemPrompt(await this.bookNames.of(view.folded), view.ctx.readingPosition, view.settings.instructions);
  }
}

/** Whether a reply is the turn's answer: no tool call asked for, or none allowed. */
const answers = (c: AgentCommand): boolean =>
  c.type === 'RecordModelReply' && !(c.allowTools && c.result.content.some((b) => b.type === 'tool_use'));

/** The name an answering call of the turn goes by in a provider batch (TurnRecord.modelBatches). */
export const replyCallId = (turnId: string, iteration: number): string => `${turnId}/reply/${iteration}`;
