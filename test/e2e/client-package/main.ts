/**
 * A program as an app developer writes one with the installed @parley/client (compiled by
 * test/e2e/client-package.e2e-spec.ts in an empty project outside the repository):
 * node main.js <baseUrl> <token> <bookId>. It completes a turn while following the stream, then
 * resumes the stream from a Last-Event-ID, and prints what it saw as one line of JSON.
 */
import { createParleyClient, ParleyApiError, type ConversationEvent, type EventOf } from '@parley/client';

const [baseUrl, token, bookId] = process.argv.slice(2);
const parley = createParleyClient({ baseUrl, token });

const started = await parley.POST('/v1/conversations', { body: { bookId, title: 'From the installed client' } });
if (!started.data) throw new Error(`starting a conversation failed: HTTP ${started.response.status}`);
const id = started.data.id;

// follow the stream from the start, then ask: the reply's text comes as deltas, then AssistantReplied
const stream = parley.streamConversation(id);
await stream.opened; // accepted: what is posted now is seen live, its text deltas included
const posted = await parley.POST('/v1/conversations/{id}/messages', {
  params: { path: { id } },
  body: { content: 'Who carried the brass telescope?' },
});
if (!posted.data) throw new Error(`posting failed: HTTP ${posted.response.status}`);
const { turnId } = posted.data;

let streamedText = '';
const seen: string[] = [];
let reply: EventOf<'AssistantReplied'> | undefined;
for await (const item of stream) {
  if (item.type === 'AssistantTextDelta') {
    streamedText += item.data.text;
    continue;
  }
  seen.push(`${item.version} ${item.type}`);
  if (item.type === 'TurnFailed') throw new Error(`the turn failed: ${item.data.code}`);
  if (item.type === 'AssistantReplied' && item.data.turnId === turnId) {
    reply = item;
    break; // leaving the loop closes the connection
  }
}

// a second stream resumes after version 1 (sent as Last-Event-ID): the same events from version 2 on
const resumed: ConversationEvent[] = [];
for await (const item of parley.streamConversation(id, { lastEventId: 1 })) {
  if (item.type === 'AssistantTextDelta') continue;
  resumed.push(item);
  if (item.version === stream.lastEventId) break;
}

// a refusal: typed answers for the REST calls, a ParleyApiError for a stream
const missing = await parley.GET('/v1/conversations/{id}', {
  params: { path: { id: '00000000-0000-4000-8000-000000000000' } },
});
let streamRefusal: string | undefined;
try {
  for await (const _ of parley.streamConversation('00000000-0000-4000-8000-000000000000')) break;
} catch (e) {
  if (e instanceof ParleyApiError) streamRefusal = `${e.status} ${e.code}`;
}

console.log(
  JSON.stringify({
    conversationId: id,
    turnId,
    seen,
    reply: reply?.data.content,
    citations: reply?.data.citations?.length,
    streamedText,
    lastEventId: stream.lastEventId,
    resumed: resumed.map((e) => `${e.version} ${e.type}`),
    missing: [missing.response.status, missing.error?.code],
    streamRefusal,
  }),
);
