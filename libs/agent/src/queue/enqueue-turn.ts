import { SpanKind } from '@opentelemetry/api';
import type { Queue } from 'bullmq';
import { contextOf, inSpan, traceMetadata } from '@parley/event-store';
import { AGENT_TURNS_QUEUE, JobName, RUN_TURN_JOB_OPTIONS, runTurnJobId } from './turn-jobs';

/**
 * Queues a turn's job (idempotently, by its id) in a `send agent-turns` producer span. The job
 * carries that span's traceparent, so the worker's run joins the turn's trace. `traceparent`: the
 * turn's trace when the caller is outside it (the dispatcher, reading the log); else the active one.
 */
export function enqueueTurn(queue: Queue, conversationId: string, turnId: string, traceparent?: string): Promise<void> {
  const jobId = runTurnJobId(conversationId, turnId);
  const attributes = {
    'messaging.system': 'bullmq',
    'messaging.operation.type': 'send',
    'messaging.destination.name': AGENT_TURNS_QUEUE,
    'messaging.message.id': jobId,
    'parley.turn.id': turnId,
  };
  const parent = traceparent ? contextOf(traceparent) : undefined;
  return inSpan(`send ${AGENT_TURNS_QUEUE}`, { kind: SpanKind.PRODUCER, attributes, parent }, async () => {
    await queue.add(
      JobName.RunTurn,
      { conversationId, turnId, ...traceMetadata() },
      { jobId, ...RUN_TURN_JOB_OPTIONS },
    );
  });
}
