import { Counter, Histogram, Registry } from 'prom-client';
import { isAbort, LlmError, TurnRecord } from '@parley/agent';
import { ConversationEvent, findTurn } from '@parley/conversation';
import { NewEvent } from '@parley/event-store';
import { FoldedConversation } from '../turns/conversation-folds';

/** OpenTelemetry GenAI metric conventions: the recommended bucket boundaries, in seconds and in tokens. */
export const GEN_AI_DURATION_BUCKETS = [
  0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
];
export const GEN_AI_TOKEN_BUCKETS = [
  1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864,
];
/** A turn is one or more model calls and searches, and may wait in the queue behind earlier turns. */
const TURN_BUCKETS = [0.25, 0.5, 1, 2, 4, 8, 15, 30, 60, 120, 300];
const TOOL_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export type TurnOutcomeLabel = 'replied' | 'failed' | 'cancelled';
export type ToolOutcome = 'ok' | 'error' | 'aborted';

/** Who was asked what, in the conventions' label names (gen_ai.system was renamed gen_ai.provider.name: both are kept). */
export interface ModelCallLabels {
  provider: string;
  model: string;
}

export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens: number;
  cacheCreationInputTokens: number;
}

/**
 * `error_type` of a failed model call: the LlmError code (rate_limited, overloaded, …), `cancelled`
 * for the turn's abort, else the error's class name; low cardinality, as the conventions ask.
 */
export function modelErrorType(e: unknown): string {
  if (e instanceof LlmError) return e.code;
  if (isAbort(e)) return 'cancelled';
  return e instanceof Error && e.name ? e.name : '_OTHER';
}

/** The token counts of a call by `gen_ai_token_type`; the cache types only when the call used the cache. */
export function tokensByType(u: TokenUsage): Array<[type: string, tokens: number]> {
  return [
    ['input', u.inputTokens],
    ['output', u.outputTokens],
    ['cache_read', u.cacheReadInputTokens],
    ['cache_creation', u.cacheCreationInputTokens],
  ].filter(([type, n]) => type === 'input' || type === 'output' || (n as number) > 0) as Array<[string, number]>;
}

/** How a turn this job saw ended, from the folded conversation; undefined while it is open (or erased). */
export function turnOutcomeOf(folded: FoldedConversation, turnId: string): TurnOutcomeLabel | undefined {
  const status = findTurn(folded.state, turnId)?.status;
  return status === 'pending' ? undefined : status;
}

/** history cuts among events about to be recorded: `summarized` or `trimmed` (the summary call failed) */
export function historyCutsOf(
  events: Array<Pick<NewEvent<ConversationEvent>, 'type'>>,
): Array<'summarized' | 'trimmed'> {
  return events.flatMap((e) =>
    e.type === 'HistorySummarized' ? ['summarized' as const] : e.type === 'HistoryTrimmed' ? ['trimmed' as const] : [],
  );
}

/**
 * A worker's instruments, registered on one prom-client registry (the process's default one in
 * the worker, served by WorkerMetricsServer; a fresh one in tests). Turns are counted once, where
 * their ending is recorded or first seen: a reply and a failure where the worker appends them, a
 * cancel (appended by the API) when the turn's job finds it.
 */
export class WorkerMetrics {
  readonly modelDuration: Histogram;
  readonly tokenUsage: Histogram;
  readonly toolDuration: Histogram;
  readonly turnDuration: Histogram;
  readonly turns: Counter;
  readonly historyCuts: Counter;
  readonly keptStepsReused: Counter;

  constructor(readonly registry: Registry = new Registry()) {
    const registers = [registry];
    this.modelDuration = new Histogram({
      name: 'gen_ai_client_operation_duration_seconds',
      help: 'GenAI operation duration: each model call of a turn (batched calls excepted), by provider and requested model',
      labelNames: [
        'gen_ai_operation_name',
        'gen_ai_system',
        'gen_ai_provider_name',
        'gen_ai_request_model',
        'error_type',
      ],
      buckets: GEN_AI_DURATION_BUCKETS,
      registers,
    });
    this.tokenUsage = new Histogram({
      name: 'gen_ai_client_token_usage',
      help: 'Tokens billed per model call (stopped attempts included), by token type',
      labelNames: [
        'gen_ai_operation_name',
        'gen_ai_system',
        'gen_ai_provider_name',
        'gen_ai_request_model',
        'gen_ai_token_type',
      ],
      buckets: GEN_AI_TOKEN_BUCKETS,
      registers,
    });
    this.toolDuration = new Histogram({
      name: 'parley_tool_call_duration_seconds',
      help: 'Tool calls of agent turns, by server (parley: its own tools; else the MCP tool server), tool and outcome (ok, error: an is_error result, aborted)',
      labelNames: ['server', 'tool', 'outcome'],
      buckets: TOOL_BUCKETS,
      registers,
    });
    this.turnDuration = new Histogram({
      name: 'parley_turn_duration_seconds',
      help: 'From the post to the end of a turn (queue time included), by outcome',
      labelNames: ['outcome'],
      buckets: TURN_BUCKETS,
      registers,
    });
    this.turns = new Counter({
      name: 'parley_turns_total',
      help: 'Turns ended, by outcome (replied, failed, cancelled) and the TurnFailed code',
      labelNames: ['outcome', 'code'],
      registers,
    });
    this.historyCuts = new Counter({
      name: 'parley_history_cuts_total',
      help: 'History cuts recorded: summarized (HistorySummarized) or trimmed (HistoryTrimmed, the summary call failed)',
      labelNames: ['mode'],
      registers,
    });
    this.keptStepsReused = new Counter({
      name: 'parley_kept_steps_reused_total',
      help: 'Steps appended from a kept answer (bought before a crash, a lost race or a handover) instead of calling again',
      registers,
    });
  }

  /** One model call (`chat`): its duration unless it went through a batch, its billed tokens, its error. */
  modelCall(labels: ModelCallLabels, call: { seconds?: number; usage?: TokenUsage[]; error?: unknown }): void {
    const gen = {
      gen_ai_operation_name: 'chat',
      gen_ai_system: labels.provider,
      gen_ai_provider_name: labels.provider,
      gen_ai_request_model: labels.model,
    };
    if (call.seconds !== undefined)
      this.modelDuration.observe(
        call.error === undefined ? gen : { ...gen, error_type: modelErrorType(call.error) },
        call.seconds,
      );
    for (const usage of call.usage ?? [])
      for (const [type, n] of tokensByType(usage)) this.tokenUsage.observe({ ...gen, gen_ai_token_type: type }, n);
  }

  /** One tool call: `server` is `parley` for Parley's own tools, `tool` the name on its server. */
  toolCall({ server, tool }: { server: string; tool: string }, outcome: ToolOutcome, seconds: number): void {
    this.toolDuration.observe({ server, tool, outcome }, seconds);
  }

  /** A turn's ending, counted once; its duration from the post when the turn is at hand. */
  turnEnded(outcome: TurnOutcomeLabel, code: string | undefined, postedAt: Date | undefined, now = Date.now()): void {
    this.turns.inc({ outcome, code: code ?? '' });
    if (postedAt) this.turnDuration.observe({ outcome }, Math.max(0, now - postedAt.getTime()) / 1000);
  }

  /** What the runner just appended for a turn: a reply ends it, a history cut is counted. */
  recorded(
    turn: Pick<TurnRecord, 'postedAt'> | undefined,
    events: Array<Pick<NewEvent<ConversationEvent>, 'type'>>,
  ): void {
    for (const mode of historyCutsOf(events)) this.historyCuts.inc({ mode });
    if (events.some((e) => e.type === 'AssistantReplied')) this.turnEnded('replied', undefined, turn?.postedAt);
  }

  /** A turn's job found it ended: only a cancel is counted here (the API appended it; the rest were counted when recorded). */
  jobEnded(folded: FoldedConversation, turnId: string): void {
    if (turnOutcomeOf(folded, turnId) !== 'cancelled') return;
    this.turnEnded('cancelled', undefined, folded.turns.find((t) => t.turnId === turnId)?.postedAt);
  }

  keptStepReused(): void {
    this.keptStepsReused.inc();
  }
}
