import { EventMetadata, eventOf, StoredEvent } from '@parley/event-store';
import type { DecidedEvent } from './decide';
import { ConversationEvent } from './events';
import { fold } from './state';

/**
 * A fork's stream, as a pure function of its source's history: ConversationStarted naming the
 * source and version, copies of the events 2..version (each caused by its original, keeping its
 * metadata), TurnCancelled for the turns left open at that version, and SourcesChanged when the
 * forking reader may no longer read some of the books (`readableBooks`: those they may). The
 * events the fork adds itself name the user who forked and, as cause, the source's event at
 * `version`.
 */
export function forkEvents(
  source: { conversationId: string; history: StoredEvent<ConversationEvent>[] },
  version: number,
  metadata: { userId: string },
  readableBooks?: Array<{ id: string; title: string }>,
): DecidedEvent[] {
  const history = source.history.slice(0, version);
  const first = history[0];
  if (first?.type !== 'ConversationStarted') {
    throw new Error(`stream of ${source.conversationId} starts with ${first?.type ?? 'nothing'}`);
  }
  if (history.length < version) throw new Error(`stream of ${source.conversationId} has no version ${version}`);
  const own: EventMetadata = { userId: metadata.userId, causationId: history[version - 1].id };
  const atVersion = fold(history);
  const readable = readableBooks && atVersion.bookIds.filter((id) => readableBooks.some((b) => b.id === id));
  const sourcesNow: DecidedEvent[] =
    readable && readable.length < atVersion.bookIds.length
      ? [
          {
            type: 'SourcesChanged',
            data: { bookIds: readable, books: readable.map((id) => readableBooks!.find((b) => b.id === id)!) },
            metadata: own,
          },
        ]
      : [];
  return [
    {
      type: 'ConversationStarted',
      data: { ...first.data, forkedFrom: { conversationId: source.conversationId, version } },
      metadata: own,
    },
    ...history.slice(1).map((e) => ({ ...eventOf(e), metadata: { ...e.metadata, causationId: e.id } })),
    ...atVersion.turns
      .filter((t) => t.status === 'pending')
      .map((t): DecidedEvent => ({
        type: 'TurnCancelled',
        data: { turnId: t.turnId },
        metadata: own,
      })),
    ...sourcesNow,
  ];
}
