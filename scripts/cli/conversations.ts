/** `conversations list|show|rename|delete`: the caller's conversations, over the HTTP API. */
import type { Api } from './api';
import { dim, positionLabel } from './format';
import { deleteConversation, getConversation, listConversations, updateConversation } from './resources';
import type { Conversation } from './types';

export function conversationLine(c: Conversation): string {
  const when = c.lastActivityAt ? ` · ${c.lastActivityAt.slice(0, 16).replace('T', ' ')}` : '';
  const details = `· ${c.messageCount ?? 0} messages · ${positionLabel(c.readingPosition)}${when}`;
  return `${c.id}  ${c.title ?? '(untitled)'} ${dim(details)}`;
}

export async function conversationsList(api: Api, opts: { bookId?: string; limit: number; json: boolean }) {
  const { items } = await listConversations(api, opts.bookId, opts.limit);
  if (opts.json) return console.log(JSON.stringify(items, null, 2));
  if (items.length === 0) return console.log('no conversations yet: npm run cli -- chat');
  for (const c of items) console.log(conversationLine(c));
}

export async function conversationsShow(api: Api, id: string, json: boolean) {
  const c = await getConversation(api, id);
  if (json) return console.log(JSON.stringify(c, null, 2));
  console.log(conversationLine(c));
  console.log(dim(`book ${c.bookId ?? '(none)'} · version ${c.version} · npm run cli -- replay ${c.id}`));
}

export async function conversationsRename(api: Api, id: string, title: string) {
  const c = await updateConversation(api, id, { title });
  console.log(conversationLine(c));
}

export async function conversationsDelete(api: Api, id: string) {
  await deleteConversation(api, id);
  console.log(`deleted conversation ${id}`);
}
