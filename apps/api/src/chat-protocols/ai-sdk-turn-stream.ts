import { createUIMessageStream, JSONValue, pipeUIMessageStreamToResponse, UIMessageChunk } from 'ai';
import type { ServerResponse } from 'node:http';
import { NumberedCitation } from '../mcp/mcp-ask';
import { clientGone } from './client-gone';
import { FeedTurn, TurnSink } from './turn-feed';

type Writer = { write(part: UIMessageChunk): void };

/**
 * Serves a turn as the AI SDK's UI message stream (SSE, `x-vercel-ai-ui-message-stream: v1`),
 * produced with the SDK's own createUIMessageStream and pipeUIMessageStreamToResponse. The
 * assistant message's id is the turn's id, so a resumed stream continues the same message.
 * Resolves once the turn ended or the client left; `cancelOnLeave` then cancels the turn.
 */
export async function serveUiMessageStream(
  turn: FeedTurn,
  res: ServerResponse,
  opts: { cancelOnLeave: boolean; keepAliveMs: number; onError: (e: unknown) => void },
): Promise<void> {
  const signal = clientGone(res);
  let followed!: () => void;
  const done = new Promise<void>((resolve) => (followed = resolve));
  const stream = createUIMessageStream({
    execute: async ({ writer }) => {
      try {
        await writeTurn(turn, writer, signal, opts.cancelOnLeave);
      } finally {
        followed();
      }
    },
    onError: (e) => {
      opts.onError(e);
      return 'the turn could not be followed; it may still be running: reconnect to see it end';
    },
  });
  await pipeUIMessageStreamToResponse({ response: res, stream, keepAliveMs: opts.keepAliveMs });
  await done;
}

async function writeTurn(turn: FeedTurn, writer: Writer, signal: AbortSignal, cancelOnLeave: boolean): Promise<void> {
  writer.write({ type: 'start', messageId: turn.turnId });
  const outcome = await turn.follow(uiSink(writer), signal);
  switch (outcome.status) {
    case 'answered':
      for (const c of outcome.citations) writer.write(sourceOf(c));
      return writer.write({ type: 'finish', finishReason: 'stop' });
    case 'failed':
      return writer.write({ type: 'error', errorText: `${outcome.code}: ${outcome.message}` });
    case 'cancelled':
      return writer.write({ type: 'abort', reason: 'the turn was cancelled' });
    case 'erased':
      return writer.write({ type: 'error', errorText: 'conversation_erased: the conversation was erased' });
    case 'approval_requested':
      // the turn waits, durably, for the reader: their answer goes to POST …/turns/:turnId/approvals
      writer.write({ type: 'tool-approval-request', approvalId: outcome.toolCallId, toolCallId: outcome.toolCallId });
      return writer.write({ type: 'finish', finishReason: 'tool-calls' });
    case 'stopped':
      if (cancelOnLeave) await turn.cancel();
      return;
  }
}

/** Parley's tools as static tool parts (`tool-search_book`), run by the server (their output is the recorded result). */
function uiSink(writer: Writer): TurnSink {
  return {
    textStart: (id) => writer.write({ type: 'text-start', id }),
    textDelta: (id, delta) => writer.write({ type: 'text-delta', id, delta }),
    textEnd: (id) => writer.write({ type: 'text-end', id }),
    toolCall: (call) =>
      writer.write({
        type: 'tool-input-available',
        toolCallId: call.toolUseId,
        toolName: call.name,
        input: call.input,
        providerExecuted: true,
      }),
    toolResult: (r) =>
      writer.write(
        r.isError
          ? { type: 'tool-output-error', toolCallId: r.toolUseId, errorText: r.content, providerExecuted: true }
          : {
              type: 'tool-output-available',
              toolCallId: r.toolUseId,
              output: json({ content: r.content, chunks: r.chunks ?? [], citationStart: r.citationStart }),
              providerExecuted: true,
            },
      ),
  };
}

/**
 * A cited passage as a `source-document` (a passage of a book is a document, with no URL of its
 * own): its id the passage's chunkId, its title where it is in the book, and the whole citation
 * (with the [n] the answer uses for it) under providerMetadata.parley.
 */
export function sourceOf(c: NumberedCitation): UIMessageChunk {
  const where = [c.chapter, c.section, c.page === null ? null : `p. ${c.page}`].filter(Boolean).join(', ');
  return {
    type: 'source-document',
    sourceId: c.chunkId,
    mediaType: 'text/plain',
    title: c.n === undefined ? where : `[${c.n}] ${where}`,
    providerMetadata: { parley: json(c) },
  };
}

/** A value as the JSON it is sent as (no undefined fields). */
const json = (v: unknown) => JSON.parse(JSON.stringify(v)) as Record<string, JSONValue>;
