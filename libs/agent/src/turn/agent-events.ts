import { Citation, ConversationEvent, ConversationEventType } from '@parley/conversation';
import { deterministicId, NewEvent, traceMetadata } from '@parley/event-store';
import {
  addUsage,
  ChatResult,
  LlmError,
  StoppedAttempt,
  stoppedAttemptsOf,
  textsOf,
  zeroUsage,
} from '../llm/llm.types';
import { costUsd } from '../llm/pricing';
import { ToolOutput } from '../tools/agent-tool';
import { citedPassages } from './citations';
import { HistoryCut } from './conversation-history';
import { ToolCallRecord, TurnRecord } from './turn-fold';

/**
 * The agent's events, built from what a step did (a model's answer, tools' outputs) and the turn
 * as the log says it stands. No I/O here: the worker calls the model and runs the tools, then
 * hands the results to these builders.
 */

/** What a turn's next event follows from: the conversation's owner and its last event. */
export interface EventOrigin {
  ownerId: string | null;
  lastEventId: string | undefined;
}

/** What a step's new events are made with besides what the step did: where they follow from, the clock, fresh ids. */
export interface StepOrigin extends EventOrigin {
  /** when the events are made: an answer's latency runs to it */
  now: Date;
  /** a new random id: an event's, an answer's message, a search the plan makes */
  newId: () => string;
}

type Events = NewEvent<ConversationEvent>[];

/** The always-retrieve plan's second search (RETRIEVAL_HYDE) is told apart by its toolUseId. */
export const HYDE_PREFIX = 'hyde_';
export const isHydeCall = (toolUseId: string) => toolUseId.startsWith(HYDE_PREFIX);

/**
 * Agent events name the owner, the turn (correlation), the event they follow from (causation) and
 * the span they were made under (traceparent), so a turn resumed elsewhere continues its trace.
 */
export function turnEvent<T extends ConversationEventType>(
  at: EventOrigin,
  turnId: string,
  type: T,
  data: Extract<ConversationEvent, { type: T }>['data'],
  id: string,
): NewEvent<ConversationEvent> {
  const event = { type, data } as Extract<ConversationEvent, { type: T }>;
  return {
    ...event,
    id,
    metadata: {
      userId: at.ownerId ?? undefined,
      correlationId: turnId,
      causationId: at.lastEventId,
      ...traceMetadata(),
    },
  };
}

/**
 * ModelCallStopped for each billed attempt of a call that stopped; `cancelled`: the log shows the
 * turn cancelled. Ids come from the turn, the call and the attempt (the provider's message id), so
 * an append made again (a retry, another worker) adds nothing.
 */
export function modelCallStopped(
  at: EventOrigin,
  turnId: string,
  iteration: number,
  attempts: StoppedAttempt[],
  { cancelled = false } = {},
): Events {
  return attempts.map((a) =>
    turnEvent(
      at,
      turnId,
      'ModelCallStopped',
      {
        turnId,
        iteration,
        model: a.model,
        usage: a.usage,
        costUsd: costUsd(a.model, a.usage),
        reason: a.cause === 'broken' ? 'broken' : cancelled ? 'cancelled' : 'aborted',
      },
      deterministicId('ModelCallStopped', turnId, String(iteration), a.messageId),
    ),
  );
}

/**
 * An answering call's result: the tool calls it asked for (ToolInvoked) or, when it asked for
 * none or could not (`allowTools` false: the last call), its answer (AssistantReplied); after the
 * attempts it had broken off midway.
 */
export function modelReplied(
  at: StepOrigin,
  turn: TurnRecord,
  { iteration, allowTools }: { iteration: number; allowTools: boolean },
  result: ChatResult,
  /** the answer as the provider's citations make it (whole-book retrieval) */
  cite?: (result: ChatResult) => { content: string; citations: Citation[] },
): Events {
  const stopped = modelCallStopped(at, turn.turnId, iteration, result.stoppedAttempts ?? []);
  const asksForTools = allowTools && result.content.some((b) => b.type === 'tool_use');
  return [
    ...stopped,
    ...(asksForTools
      ? toolsInvoked(at, turn.turnId, iteration, result)
      : [assistantReplied(at, turn, iteration, result, cite?.(result))]),
  ];
}

/** A ToolInvoked per tool call, in the model's order; the first carries the call's text, blocks, usage and model. */
export function toolsInvoked(at: StepOrigin, turnId: string, iteration: number, result: ChatResult): Events {
  const toolUses = result.content.flatMap((b) => (b.type === 'tool_use' ? [b] : []));
  return toolUses.map((b, i) =>
    turnEvent(
      at,
      turnId,
      'ToolInvoked',
      {
        turnId,
        toolUseId: b.id,
        name: b.name,
        input: b.input,
        iteration,
        ...(i === 0
          ? {
              assistantText: textsOf(result).join(''),
              assistantContent: result.content.map((c) =>
                c.type === 'text'
                  ? { type: 'text' as const, text: c.text }
                  : { type: 'tool_use' as const, toolUseId: c.id },
              ),
              usage: result.usage,
              model: result.model,
              ...(result.batched ? { batched: true } : {}),
              costUsd: costUsd(result.model, result.usage, { batched: result.batched }),
            }
          : {}),
      },
      at.newId(),
    ),
  );
}

/** The turn's answer: its citations, the usage and cost of all its calls, its latency since the question. */
export function assistantReplied(
  at: StepOrigin,
  turn: TurnRecord,
  iteration: number,
  result: ChatResult,
  /** the answer as whole-book retrieval cites it (the provider's citations); otherwise its [n] of the turn's searches */
  cited?: { content: string; citations: Citation[] },
): NewEvent<ConversationEvent> {
  const text = cited?.content ?? textsOf(result).join('');
  const earlier = turn.iterations.reduce((sum, it) => (it.usage ? addUsage(sum, it.usage) : sum), zeroUsage());
  const usage = addUsage(earlier, result.usage);
  const citations = cited?.citations ?? citedPassages(text, turn);
  return turnEvent(
    at,
    turn.turnId,
    'AssistantReplied',
    {
      turnId: turn.turnId,
      messageId: at.newId(),
      content: text.trim() ? text : '(no answer)',
      model: result.model,
      stopReason: result.stopReason,
      usage,
      costUsd: costUsd(result.model, usage, { batched: result.batched }),
      citations,
      isFromBook: citations.length > 0,
      iterations: iteration,
      latencyMs: at.now.getTime() - turn.postedAt.getTime(),
    },
    at.newId(),
  );
}

/** A call put into the provider's batch: paid for from here on, so recorded before the turn waits for it. */
export function modelBatchSubmitted(
  at: StepOrigin,
  turnId: string,
  submitted: { step: string; provider: string; providerBatchId: string },
): NewEvent<ConversationEvent> {
  return turnEvent(at, turnId, 'ModelBatchSubmitted', { turnId, ...submitted }, at.newId());
}

/** What each tool call returned, in call order; a tool's passages with the number of the first. */
export function toolResultsRecorded(
  at: StepOrigin,
  turnId: string,
  outputs: Array<{ call: ToolCallRecord; output: ToolOutput; citationStart: number }>,
): Events {
  return outputs.map(({ call, output, citationStart }) =>
    turnEvent(
      at,
      turnId,
      'ToolResultRecorded',
      {
        turnId,
        toolUseId: call.toolUseId,
        content: output.content,
        isError: output.isError ?? false,
        ...(output.chunks ? { chunks: output.chunks, citationStart } : {}),
      },
      at.newId(),
    ),
  );
}

/** The model's summary of what the cut leaves out; an empty one drops those turns instead (HistoryTrimmed). */
export function historySummarized(at: StepOrigin, turnId: string, cut: HistoryCut, result: ChatResult): Events {
  const stopped = modelCallStopped(at, turnId, 1, result.stoppedAttempts ?? []);
  const summary = textsOf(result).join('').trim();
  if (!summary)
    return [...stopped, historyTrimmedEvent(at, turnId, cut, 'empty_summary: the model wrote an empty summary')];
  return [
    ...stopped,
    turnEvent(
      at,
      turnId,
      'HistorySummarized',
      {
        turnId,
        coversVersions: cut.coversVersions,
        summary,
        usage: result.usage,
        model: result.model,
        costUsd: costUsd(result.model, result.usage),
      },
      at.newId(),
    ),
  ];
}

/** The summary call failed: the turns the cut leaves out are dropped unsummarised, after what the call was billed. */
export function historyTrimmed(at: StepOrigin, turnId: string, cut: HistoryCut, error: LlmError): Events {
  return [
    ...modelCallStopped(at, turnId, 1, stoppedAttemptsOf(error)),
    historyTrimmedEvent(at, turnId, cut, `${error.code}: ${error.message}`),
  ];
}

function historyTrimmedEvent(at: StepOrigin, turnId: string, cut: HistoryCut, reason: string) {
  return turnEvent(
    at,
    turnId,
    'HistoryTrimmed',
    { turnId, droppedVersions: cut.droppedVersions, reason: reason.slice(0, 500) },
    at.newId(),
  );
}

/**
 * The always-retrieve plan's searches, as search_book calls of the turn's first iteration: the
 * question as the model rewrote it (the question itself when it wrote nothing) and, with
 * RETRIEVAL_HYDE, the passage it wrote that would answer it; both calls' usage on the first.
 */
export function searchesInvoked(
  at: StepOrigin,
  turn: TurnRecord,
  reformulated: ChatResult,
  hyde: ChatResult | null,
): Events {
  const { turnId } = turn;
  const stopped = modelCallStopped(at, turnId, 1, [
    ...(reformulated.stoppedAttempts ?? []),
    ...(hyde?.stoppedAttempts ?? []),
  ]);
  const query = textsOf(reformulated).join(' ').split('\n')[0].trim().slice(0, 500) || turn.content.slice(0, 500);
  const passage = hyde ? textsOf(hyde).join(' ').replace(/\s+/g, ' ').trim().slice(0, 500) : '';
  const search = (toolUseId: string, text: string) =>
    ({ turnId, toolUseId, name: 'search_book', input: { query: text }, iteration: 1 }) as const;
  return [
    ...stopped,
    turnEvent(
      at,
      turnId,
      'ToolInvoked',
      {
        ...search(`retrieve_${at.newId()}`, query),
        usage: hyde ? addUsage(reformulated.usage, hyde.usage) : reformulated.usage,
        model: reformulated.model,
      },
      at.newId(),
    ),
    ...(passage
      ? [turnEvent(at, turnId, 'ToolInvoked', search(`${HYDE_PREFIX}${at.newId()}`, passage), at.newId())]
      : []),
  ];
}
