import { randomUUID } from 'node:crypto';
import {
  addUsage,
  answerOf,
  ChatOptions,
  citedPassages,
  costUsd,
  LlmClient,
  LlmMessage,
  LlmToolSpec,
  modelCallStopped,
  turnEvent,
  TurnRecord,
  zeroUsage,
} from '@parley/agent';
import { ConversationEvent } from '@parley/conversation';
import { NewEvent } from '@parley/event-store';
import { LiveDeltas } from '@parley/platform';
import { BookNames } from './book-names';
import { DeltaBatcher } from './delta-batcher';
import { textsOf } from './model-text';
import { systemPrompt } from './system-prompt';
import { LoadedTurn } from './conversation-folds';

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

/** What an answering call came to: its events, or the call still waiting in the provider's batch. */
export type StepResult =
  { kind: 'events'; events: NewEvent<ConversationEvent>[] } | { kind: 'wait-model-batch'; providerBatchId: string };

/**
 * An answering model call, streamed to the reader (or sent through the provider's batch), said as
 * events: tool calls become ToolInvoked, a text answer AssistantReplied, a submitted batch call
 * ModelBatchSubmitted.
 */
export class ModelReply {
  constructor(
    private readonly llm: LlmClient,
    private readonly deltas: LiveDeltas,
    private readonly bookNames: BookNames,
  ) {}

  async reply(loaded: LoadedTurn, call: LlmCall): Promise<StepResult> {
    const { messages, prefixEnd, tools, iteration, allowTools, signal } = call;
    const conversationId = loaded.ctx.conversationId;
    const turn = loaded.turn!;
    const deltas = new DeltaBatcher(this.deltas, conversationId, turn.turnId, iteration);
    const viaBatch = this.viaBatch(turn, iteration);
    const outcome = await this.llm
      .chatWithTools(messages, tools, {
        system: await this.systemFor(loaded),
        model: loaded.settings.model,
        prefixEnd,
        toolChoice: allowTools ? 'auto' : 'none',
        signal,
        onTextDelta: (text, attempt = 1) => deltas.add(text, attempt),
        viaBatch,
      })
      .finally(() => deltas.flush());
    if (outcome.kind === 'pending') return { kind: 'wait-model-batch', providerBatchId: outcome.providerBatchId };
    if (outcome.kind === 'submitted' && viaBatch) {
      // paid for from here on: recorded (and kept) before the turn waits for the batch to end
      return {
        kind: 'events',
        events: [
          turnEvent(loaded, turn.turnId, 'ModelBatchSubmitted', {
            turnId: turn.turnId,
            step: viaBatch.callId,
            provider: this.llm.provider,
            providerBatchId: outcome.providerBatchId,
          }),
        ],
      };
    }
    const result = answerOf(outcome);
    const text = textsOf(result).join('');
    const stopped = modelCallStopped(loaded, turn.turnId, iteration, result.stoppedAttempts ?? []);
    const toolUses = allowTools ? result.content.filter((b) => b.type === 'tool_use') : [];
    if (toolUses.length > 0) {
      return {
        kind: 'events',
        events: [
          ...stopped,
          ...toolUses.map((b, i) =>
            turnEvent(loaded, turn.turnId, 'ToolInvoked', {
              turnId: turn.turnId,
              toolUseId: b.id,
              name: b.name,
              input: b.input,
              iteration,
              ...(i === 0
                ? {
                    assistantText: text,
                    assistantContent: result.content.map((c) =>
                      c.type === 'text'
                        ? { type: 'text' as const, text: c.text }
                        : { type: 'tool_use' as const, toolUseId: c.id },
                    ),
                    usage: result.usage,
                    model: result.model,
                    ...(result.batched ? { batched: true } : {}),
                  }
                : {}),
            }),
          ),
        ],
      };
    }
    const usage = turn.iterations.reduce((sum, it) => (it.usage ? addUsage(sum, it.usage) : sum), zeroUsage());
    const total = addUsage(usage, result.usage);
    const citations = citedPassages(text, turn);
    const content = text.trim() ? text : '(no answer)';
    return {
      kind: 'events',
      events: [
        ...stopped,
        turnEvent(loaded, turn.turnId, 'AssistantReplied', {
          turnId: turn.turnId,
          messageId: randomUUID(),
          content,
          model: result.model,
          stopReason: result.stopReason,
          usage: total,
          costUsd: costUsd(result.model, total, { batched: result.batched }),
          citations,
          isFromBook: citations.length > 0,
          iterations: iteration,
          latencyMs: Date.now() - turn.postedAt.getTime(),
        }),
      ],
    };
  }

  /**
   * A batch prompt sent `via: message-batches` has its answering calls (not the small helper
   * calls: a reformulated query, a summary) go through the provider's Message Batches API.
   */
  private viaBatch(turn: TurnRecord, iteration: number): ChatOptions['viaBatch'] {
    if (turn.batch?.via !== 'message-batches' || !this.llm.supportsBatches) return undefined;
    const callId = `${turn.turnId}/reply/${iteration}`;
    return { callId, providerBatchId: turn.modelBatches?.[callId] };
  }

  private async systemFor(loaded: LoadedTurn): Promise<string> {
    return systemPrompt(await this.bookNames.of(loaded), loaded.ctx.readingPosition, loaded.settings.instructions);
  }
}
