import { AGUIEvent, EventType } from '@ag-ui/core';
import { EventEncoder } from '@ag-ui/encoder';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { clientGone } from './client-gone';
import { FeedTurn, TurnSink } from './turn-feed';

/**
 * Serves a turn as an AG-UI run: RUN_STARTED, each model call's text as a TEXT_MESSAGE_*, each
 * tool call as TOOL_CALL_START/ARGS/END then TOOL_CALL_RESULT, and RUN_FINISHED (its result the
 * answer's citations) or RUN_ERROR. Encoded with @ag-ui/encoder for what the client accepts (SSE,
 * or AG-UI's protobuf). Resolves once the turn ended or the client left (then the turn is cancelled).
 */
export async function serveAgUiRun(
  turn: FeedTurn,
  run: { threadId: string; runId: string },
  accept: IncomingHttpHeaders['accept'],
  res: ServerResponse,
  keepAliveMs: number,
): Promise<void> {
  const ids = { threadId: run.threadId, runId: run.runId }; // only these: the caller's run may carry more
  const encoder = new EventEncoder({ accept });
  const signal = clientGone(res);
  const send = (event: AGUIEvent) => {
    if (!res.destroyed) res.write(encoder.encodeBinary({ timestamp: Date.now(), ...event }));
  };
  res.writeHead(200, {
    'content-type': encoder.getContentType(),
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  // an SSE comment keeps proxies from closing a quiet run (protobuf framing has no comments)
  const ping = encoder.getContentType().startsWith('text/event-stream')
    ? setInterval(() => !res.destroyed && res.write(': ping\n\n'), keepAliveMs)
    : undefined;
  try {
    send({ type: EventType.RUN_STARTED, ...ids });
    const outcome = await turn.follow(agUiSink(send), signal);
    switch (outcome.status) {
      case 'answered':
        send({
          type: EventType.RUN_FINISHED,
          ...ids,
          result: { turnId: turn.turnId, messageId: outcome.messageId, citations: outcome.citations },
          outcome: { type: 'success' },
        });
        break;
      case 'failed':
        send({ type: EventType.RUN_ERROR, code: outcome.code, message: outcome.message });
        break;
      case 'cancelled':
        send({ type: EventType.RUN_FINISHED, ...ids, outcome: { type: 'cancelled' } });
        break;
      case 'erased':
        send({
          type: EventType.RUN_ERROR,
          code: 'conversation_erased',
          message: 'the conversation was erased',
        });
        break;
      case 'approval_requested':
        // the run pauses on the reader's approval (AG-UI's interrupt); POST …/turns/:turnId/approvals answers it
        send({
          type: EventType.RUN_FINISHED,
          ...ids,
          outcome: {
            type: 'interrupt',
            interrupts: [
              {
                id: outcome.toolCallId,
                reason: 'tool_approval',
                message: `Allow ${outcome.tool} with ${JSON.stringify(outcome.input)}?`,
                toolCallId: outcome.toolCallId,
                ...(outcome.expiresAt ? { expiresAt: outcome.expiresAt } : {}),
              },
            ],
          },
        });
        break;
      case 'stopped':
        await turn.cancel(); // the client left: the run is over for it, so is the turn
        break;
    }
  } catch (e) {
    send({ type: EventType.RUN_ERROR, code: 'internal_error', message: 'the turn could not be followed' });
    throw e;
  } finally {
    clearInterval(ping);
    if (!res.destroyed) res.end();
  }
}

/** The tool result is its own message (role tool), its id the tool call's with `:result`. */
function agUiSink(event: (e: AGUIEvent) => void): TurnSink {
  return {
    textStart: (messageId) => event({ type: EventType.TEXT_MESSAGE_START, messageId, role: 'assistant' }),
    textDelta: (messageId, delta) => event({ type: EventType.TEXT_MESSAGE_CONTENT, messageId, delta }),
    textEnd: (messageId) => event({ type: EventType.TEXT_MESSAGE_END, messageId }),
    toolCall: (call) => {
      event({ type: EventType.TOOL_CALL_START, toolCallId: call.toolUseId, toolCallName: call.name });
      event({ type: EventType.TOOL_CALL_ARGS, toolCallId: call.toolUseId, delta: JSON.stringify(call.input) });
      event({ type: EventType.TOOL_CALL_END, toolCallId: call.toolUseId });
    },
    toolResult: (r) =>
      event({
        type: EventType.TOOL_CALL_RESULT,
        messageId: `${r.toolUseId}:result`,
        toolCallId: r.toolUseId,
        content: r.content,
        role: 'tool',
      }),
  };
}
