import { context, Context, Span, SpanKind, trace } from '@opentelemetry/api';
import { Job, type Queue } from 'bullmq';
import { contextOf, inSpan, recordError, tracer, traceMetadata } from '@parley/event-store';
import {
  AGENT_TURNS_QUEUE,
  JobName,
  legacyRunTurnJobId,
  queuedTurnRecheckMs,
  RUN_TURN_JOB_OPTIONS,
  runTurnJobId,
} from './turn-jobs';

/**
 * A turn to queue. `traceparent`: the turn's trace when the caller is outside it (the dispatcher,
 * reading the log); else the active one.
 */
export interface TurnToEnqueue {
  conversationId: string;
  turnId: string;
  traceparent?: string;
}

/** At most this many jobs a round trip: a batch of the log far behind is thousands of turns. */
const ENQUEUE_CHUNK = 500;

const SEND_SPAN = `send ${AGENT_TURNS_QUEUE}`;

/** A turn's `send agent-turns` producer span: its options, and its parent (the turn's trace, else `active`). */
function sendSpanOf({ conversationId, turnId, traceparent }: TurnToEnqueue, active: Context) {
  const attributes = {
    'messaging.system': 'bullmq',
    'messaging.operation.type': 'send',
    'messaging.destination.name': AGENT_TURNS_QUEUE,
    'messaging.message.id': runTurnJobId(conversationId, turnId),
    'parley.turn.id': turnId,
  };
  return { options: { kind: SpanKind.PRODUCER, attributes }, parent: traceparent ? contextOf(traceparent) : active };
}

/** A turn's job, built within its send span: it carries that span's traceparent, so the run joins the turn's trace. */
function turnJobOf({ conversationId, turnId }: TurnToEnqueue) {
  return {
    name: JobName.RunTurn,
    data: { conversationId, turnId, ...traceMetadata() },
    opts: { jobId: runTurnJobId(conversationId, turnId), ...RUN_TURN_JOB_OPTIONS },
  };
}

/**
 * Queues a turn's job (idempotently, by its id) in a `send agent-turns` producer span. The job
 * carries that span's traceparent, so the worker's run joins the turn's trace. `traceparent`: as
 * in TurnToEnqueue. `turnsAhead`: the conversation's turns still open before this one, as its
 * poster decided it: the job starts delayed, as a worker would have put it (the turn before
 * promotes it when it ends), instead of being taken only to be put back.
 */
export function enqueueTurn(
  queue: Queue,
  conversationId: string,
  turnId: string,
  traceparent?: string,
  { turnsAhead = 0 }: { turnsAhead?: number } = {},
): Promise<void> {
  const turn = { conversationId, turnId, traceparent };
  const { options, parent } = sendSpanOf(turn, context.active());
  return inSpan(SEND_SPAN, { ...options, parent }, async () => {
    const { name, data, opts } = turnJobOf(turn);
    await queue.add(name, data, turnsAhead > 0 ? { ...opts, delay: queuedTurnRecheckMs(turnsAhead) } : opts);
  });
}

/**
 * Queues the turns' jobs as `enqueueTurn` would each, in order, each in its own send span, but in
 * one round trip to Redis per ENQUEUE_CHUNK turns instead of one a turn: `addBulk` pipelines the
 * adds (no MULTI: when one fails the others still land, which a retry of the batch finds harmless).
 */
export async function enqueueTurns(queue: Queue, turns: TurnToEnqueue[]): Promise<void> {
  const active = context.active();
  for (let i = 0; i < turns.length; i += ENQUEUE_CHUNK) {
    const sends: Array<{ span: Span; job: ReturnType<typeof turnJobOf> }> = [];
    for (const turn of turns.slice(i, i + ENQUEUE_CHUNK)) {
      const { options, parent } = sendSpanOf(turn, active);
      const span = tracer.startSpan(SEND_SPAN, options, parent);
      sends.push({ span, job: context.with(trace.setSpan(parent, span), () => turnJobOf(turn)) });
    }
    try {
      await queue.addBulk(sends.map((s) => s.job));
    } catch (e) {
      for (const { span } of sends) recordError(span, e);
      throw e;
    } finally {
      for (const { span } of sends) span.end();
    }
  }
}

/** A turn's job in the queue, under its id or the one an earlier release gave it; undefined when gone. */
export async function findTurnJob(queue: Queue, conversationId: string, turnId: string) {
  return (
    (await queue.getJob(runTurnJobId(conversationId, turnId))) ??
    (await queue.getJob(legacyRunTurnJobId(conversationId, turnId)))
  );
}

/**
 * A turn that waits (its job delayed) runs now: its job is promoted, or queued anew when it is
 * gone (the job id is the turn's, so never twice). A job running or queued is left as it is.
 */
export async function wakeTurn(queue: Queue, conversationId: string, turnId: string, traceparent?: string) {
  // most often the API queued it delayed behind the turn that just ended: one round trip, no look first
  if (await promotedById(queue, runTurnJobId(conversationId, turnId))) return;
  const job = await findTurnJob(queue, conversationId, turnId);
  if (job) return promoteIfDelayed(job);
  await enqueueTurn(queue, conversationId, turnId, traceparent);
  // the API may have queued it delayed (a turn was ahead) between the look and this add, which
  // its id then made a no-op: promote what is there
  const added = await queue.getJob(runTurnJobId(conversationId, turnId));
  if (added) await promoteIfDelayed(added);
}

/** Promotes the job if it is delayed; false when it is not (running, waiting, gone) or Redis did not answer. */
function promotedById(queue: Queue, jobId: string): Promise<boolean> {
  return new Job(queue, JobName.RunTurn, {}, {}, jobId).promote().then(
    () => true,
    () => false,
  );
}

async function promoteIfDelayed(job: Job): Promise<void> {
  if (await job.isDelayed()) await job.promote().catch(() => undefined);
}
