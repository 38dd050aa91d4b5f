import {
  Citation,
  ConversationEvent,
  ConversationEventType,
  DecidedEvent,
  SearchedInstead,
} from '@parley/conversation';
import { deterministicId } from '@parley/event-store';
import { addUsage, ChatResult, StoppedAttempt, textsOf, zeroUsage } from '../llm/llm.types';
import { PriceTable } from '../llm/price-table';
import { joinParts, ToolContentPart, ToolOutput } from '../tools/agent-tool';
import { citedPassages } from './citations';
import { HistoryCut } from './history-cut';
import { ToolCallRecord, TurnRecord } from './turn-fold';

/**
 * The agent's events, built from what a step did (a model's answer, tools' outputs) and the turn
 * as the log says it stands; the calls priced by the process's price table (`prices`). Pure, and called only by the agent's decider (decide-agent-step.ts),
 * which first checks that the step still applies; the command handler stamps their metadata.
 */

/**
 * What a step's events are made with besides what the step did: the step's own id, from which
 * every id they carry derives (so the step decided again, after a lost race or a crash, makes the
 * same events), and when the step's work was done.
 */
export interface StepMade {
  stepId: string;
  at: Date;
}

type Events = DecidedEvent[];

/** The n-th id a step makes: an event's, an answer's message, a search's tool use. */
export const stepIdFor = (made: Pick<StepMade, 'stepId'>, what: string): string =>
  deterministicId('agent-step', made.stepId, what);

/** The always-retrieve plan's second search (RETRIEVAL_HYDE) is told apart by its toolUseId. */
export const HYDE_PREFIX = 'hyde_';
export const isHydeCall = (toolUseId: string) => toolUseId.startsWith(HYDE_PREFIX);

function agentEvent<T extends ConversationEventType>(
  type: T,
  data: Extract<ConversationEvent, { type: T }>['data'],
  id: string,
): DecidedEvent {
  return { type, data, id } as DecidedEvent;
}

/**
 * ModelCallStopped for each billed attempt of a call that stopped; `cancelled`: the log shows the
 * turn cancelled. Ids come from the turn, the call and the attempt (the provider's message id), so
 * an append made again (a retry, another worker) adds nothing.
 */
export function modelCallStopped(
  prices: PriceTable,
  turnId: string,
  iteration: number,
  attempts: StoppedAttempt[],
  { cancelled = false } = {},
): Events {
  return attempts.map((a) =>
    agentEvent(
      'ModelCallStopped',
      {
        turnId,
        iteration,
        model: a.model,
        usage: a.usage,
        costUsd: prices.costUsd(a.model, a.usage),
        ...(a.estimated ? { estimated: true as const } : {}),
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
  prices: PriceTable,
  made: StepMade,
  turn: TurnRecord,
  { iteration, allowTools }: { iteration: number; allowTools: boolean },
  result: ChatResult,
  /** the answer as the provider's citations make it (whole-book retrieval) */
  cited?: CitedAnswer,
  /** a `whole-book` turn that searched: why (on its answer) */
  searchedInstead?: SearchedInstead,
): Events {
  const stopped = modelCallStopped(prices, turn.turnId, iteration, result.stoppedAttempts ?? []);
  const asksForTools = allowTools && result.content.some((b) => b.type === 'tool_use');
  return [
    ...stopped,
    ...(asksForTools
      ? toolsInvoked(prices, made, turn.turnId, iteration, result)
      : [assistantReplied(prices, made, turn, iteration, result, cited, searchedInstead)]),
  ];
}

/** A ToolInvoked per tool call, in the model's order; the first carries the call's text, blocks, usage and model. */
export function toolsInvoked(
  prices: PriceTable,
  made: StepMade,
  turnId: string,
  iteration: number,
  result: ChatResult,
): Events {
  const toolUses = result.content.flatMap((b) => (b.type === 'tool_use' ? [b] : []));
  return toolUses.map((b, i) =>
    agentEvent(
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
              costUsd: prices.costUsd(result.model, result.usage, { batched: result.batched }),
            }
          : {}),
      },
      stepIdFor(made, `event:${b.id}`),
    ),
  );
}

/** An answer as the provider's citations of the documents sent make it: its text with [n] marks, and those passages. */
export interface CitedAnswer {
  content: string;
  citations: Citation[];
}

/** The turn's answer: its citations, the usage and cost of all its calls, its latency since the question. */
export function assistantReplied(
  prices: PriceTable,
  made: StepMade,
  turn: TurnRecord,
  iteration: number,
  result: ChatResult,
  /** the answer as whole-book retrieval cites it (the provider's citations); otherwise its [n] of the turn's searches */
  cited?: CitedAnswer,
  /** a `whole-book` turn that searched: why */
  searchedInstead?: SearchedInstead,
): DecidedEvent {
  const text = cited?.content ?? textsOf(result).join('');
  const earlier = turn.iterations.reduce((sum, it) => (it.usage ? addUsage(sum, it.usage) : sum), zeroUsage());
  const usage = addUsage(earlier, result.usage);
  const citations = cited?.citations ?? citedPassages(text, turn);
  return agentEvent(
    'AssistantReplied',
    {
      turnId: turn.turnId,
      messageId: stepIdFor(made, 'message'),
      content: text.trim() ? text : '(no answer)',
      model: result.model,
      stopReason: result.stopReason,
      usage,
      costUsd: prices.costUsd(result.model, usage, { batched: result.batched }),
      citations,
      isFromBook: citations.length > 0,
      iterations: iteration,
      latencyMs: made.at.getTime() - turn.postedAt.getTime(),
      ...(searchedInstead ? { searchedInstead } : {}),
    },
    stepIdFor(made, 'event:answer'),
  );
}

/** A call put into the provider's batch: paid for from here on, so recorded before the turn waits for it. */
export function modelBatchSubmitted(
  made: StepMade,
  turnId: string,
  submitted: { step: string; provider: string; providerBatchId: string },
): DecidedEvent {
  return agentEvent('ModelBatchSubmitted', { turnId, ...submitted }, stepIdFor(made, 'event:submitted'));
}

/** What each tool call returned, in call order; a tool's passages with the number of the first. */
export function toolResultsRecorded(made: StepMade, turnId: string, outputs: ToolOutcome[]): Events {
  return outputs.map(({ call, output, citationStart }) =>
    agentEvent(
      'ToolResultRecorded',
      {
        turnId,
        toolUseId: call.toolUseId,
        ...(output.contentParts
          ? { content: textBesidePassages(output.contentParts), contentParts: output.contentParts }
          : { content: output.content }),
        isError: output.isError ?? false,
        ...(output.chunks ? { chunks: output.chunks, citationStart } : {}),
      },
      stepIdFor(made, `event:${call.toolUseId}`),
    ),
  );
}

/** ToolApprovalRequested for each call that waits for the reader (`expiresAt`: when it is denied unanswered). */
export function approvalsRequested(
  made: StepMade,
  turnId: string,
  calls: ToolCallRecord[],
  expiresAt: string | undefined,
): Events {
  return calls.map((c) =>
    agentEvent(
      'ToolApprovalRequested',
      { turnId, toolCallId: c.toolUseId, tool: c.name, input: c.input, ...(expiresAt ? { expiresAt } : {}) },
      stepIdFor(made, `approval:${c.toolUseId}`),
    ),
  );
}

/** The calls whose approval expired unanswered, denied. */
export function approvalsExpired(made: StepMade, turnId: string, toolCallIds: string[]): Events {
  return toolCallIds.map((toolCallId) =>
    agentEvent(
      'ToolApprovalDecided',
      { turnId, toolCallId, approved: false, reason: 'no answer came before the request expired', by: 'timeout' },
      stepIdFor(made, `expired:${toolCallId}`),
    ),
  );
}

/**
 * What a 0.3 process reads of a result kept by reference during a rolling upgrade: the result's own
 * words without the passages (the log is joined with the book's text for everyone else).
 */
const textBesidePassages = (parts: ToolContentPart[]): string => joinParts(parts, () => '');

/** A tool call's output, with the number its passages start at. */
export interface ToolOutcome {
  call: ToolCallRecord;
  output: ToolOutput;
  citationStart: number;
}

/** The model's summary of what the cut leaves out; an empty one drops those turns instead (HistoryTrimmed). */
export function historySummarized(
  prices: PriceTable,
  made: StepMade,
  turnId: string,
  cut: CutVersions,
  result: ChatResult,
): Events {
  const stopped = modelCallStopped(prices, turnId, 1, result.stoppedAttempts ?? []);
  const summary = textsOf(result).join('').trim();
  if (!summary)
    return [...stopped, historyTrimmedEvent(made, turnId, cut, 'empty_summary: the model wrote an empty summary')];
  return [
    ...stopped,
    agentEvent(
      'HistorySummarized',
      {
        turnId,
        coversVersions: cut.coversVersions,
        summary,
        usage: result.usage,
        model: result.model,
        costUsd: prices.costUsd(result.model, result.usage),
      },
      stepIdFor(made, 'event:summary'),
    ),
  ];
}

/** What a history cut covers: the versions a summary stands for, the versions a trim drops. */
export type CutVersions = Pick<HistoryCut, 'coversVersions' | 'droppedVersions'>;

/** The summary call failed: the turns the cut leaves out are dropped unsummarised, after what the call was billed. */
export function historyTrimmed(
  prices: PriceTable,
  made: StepMade,
  turnId: string,
  cut: CutVersions,
  failure: { code: string; message: string; stoppedAttempts: StoppedAttempt[] },
): Events {
  return [
    ...modelCallStopped(prices, turnId, 1, failure.stoppedAttempts),
    historyTrimmedEvent(made, turnId, cut, `${failure.code}: ${failure.message}`),
  ];
}

function historyTrimmedEvent(made: StepMade, turnId: string, cut: CutVersions, reason: string) {
  return agentEvent(
    'HistoryTrimmed',
    { turnId, droppedVersions: cut.droppedVersions, reason: reason.slice(0, 500) },
    stepIdFor(made, 'event:trim'),
  );
}

/**
 * The always-retrieve plan's searches, as search_book calls of the turn's first iteration: the
 * question as the model rewrote it (the question itself when it wrote nothing) and, with
 * RETRIEVAL_HYDE, the passage it wrote that would answer it; both calls' usage on the first.
 */
export function searchesInvoked(
  prices: PriceTable,
  made: StepMade,
  turn: TurnRecord,
  reformulated: ChatResult,
  hyde: ChatResult | null,
): Events {
  const { turnId } = turn;
  const stopped = modelCallStopped(prices, turnId, 1, [
    ...(reformulated.stoppedAttempts ?? []),
    ...(hyde?.stoppedAttempts ?? []),
  ]);
  const query = textsOf(reformulated).join(' ').split('\n')[0].trim().slice(0, 500) || turn.content.slice(0, 500);
  const passage = hyde ? textsOf(hyde).join(' ').replace(/\s+/g, ' ').trim().slice(0, 500) : '';
  const search = (toolUseId: string, text: string) =>
    ({ turnId, toolUseId, name: 'search_book', input: { query: text }, iteration: 1 }) as const;
  return [
    ...stopped,
    agentEvent(
      'ToolInvoked',
      {
        ...search(`retrieve_${stepIdFor(made, 'query')}`, query),
        usage: hyde ? addUsage(reformulated.usage, hyde.usage) : reformulated.usage,
        model: reformulated.model,
      },
      stepIdFor(made, 'event:query'),
    ),
    ...(passage
      ? [
          agentEvent(
            'ToolInvoked',
            search(`${HYDE_PREFIX}${stepIdFor(made, 'hyde')}`, passage),
            stepIdFor(made, 'event:hyde'),
          ),
        ]
      : []),
  ];
}
