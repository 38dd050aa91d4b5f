import type { Citation } from '@parley/conversation';
import type { Book, SearchHit } from '@parley/books';
import type { ConversationSummary, MessageView } from '@parley/read-models';
import type { ConversationView } from '../conversations/conversation-view';
import type { AskOutcome, NumberedCitation } from './mcp-ask';

/**
 * What the MCP tools and resources show a model and its reader, as text. Each tool also returns
 * the same data as `structuredContent`; the text is for clients (and models) that read only it.
 */

export function citationLabel(c: Citation): string {
  const parts = [c.chapter || (c.chapterIndex !== undefined ? `chapter ${c.chapterIndex}` : 'passage')];
  if (c.section) parts.push(c.section);
  if (c.page !== null && c.page !== undefined) parts.push(`p. ${c.page}`);
  return parts.join(', ');
}

export function booksText(books: Book[]): string {
  if (books.length === 0) return 'No books yet: upload one with POST /v1/books.';
  return books
    .map((b) => {
      const by = b.author ? ` by ${b.author}` : '';
      const chapters = b.status === 'ready' ? `, ${b.chapters.length} chapters` : '';
      return `- ${b.title}${by} (id ${b.id}, ${b.status}${chapters})`;
    })
    .join('\n');
}

export function searchText(hits: SearchHit[]): string {
  if (hits.length === 0) return 'No passage matches.';
  return hits.map((h, i) => `[${i + 1}] ${citationLabel(h)}\n${h.text}`).join('\n\n');
}

export function askText(outcome: AskOutcome): string {
  const where = `(conversation ${outcome.conversationId}, turn ${outcome.turnId})`;
  switch (outcome.status) {
    case 'answered': {
      const sources = outcome.citations.map(
        (c: NumberedCitation) => `${c.n !== undefined ? `[${c.n}]` : '-'} ${citationLabel(c)}`,
      );
      return [outcome.answer, ...(sources.length ? ['', 'Sources:', ...sources] : []), '', where].join('\n');
    }
    case 'failed':
      return `The turn failed (${outcome.code}): ${outcome.message} ${where}`;
    case 'cancelled':
      return `The turn was cancelled ${where}`;
    case 'erased':
      return `The conversation was erased before the turn ended ${where}`;
    case 'stopped following':
      return `Stopped waiting; the turn goes on and its answer will be in the conversation ${where}`;
    case 'approval_requested':
      return (
        `The turn waits for the reader's approval before it calls ${outcome.tool} with ${JSON.stringify(outcome.input)} ` +
        `${where}. Ask the reader; their answer goes to POST /v1/conversations/${outcome.conversationId}/turns/` +
        `${outcome.turnId}/approvals {"toolCallId": "${outcome.toolCallId}", "approved": true|false}, and the turn goes on.` +
        (outcome.expiresAt ? ` Unanswered by ${outcome.expiresAt}, it is declined.` : '')
      );
  }
}

export function conversationsText(items: ConversationSummary[], nextCursor: string | null): string {
  if (items.length === 0) return 'No conversations.';
  const lines = items.map(
    (c) =>
      `- ${c.title ?? 'Untitled'} (id ${c.id}, ${c.messageCount} messages, last active ${c.lastActivityAt}` +
      `${c.bookIds.length ? `, books ${c.bookIds.join(', ')}` : ''})`,
  );
  return [...lines, ...(nextCursor ? [`More: call again with cursor "${nextCursor}".`] : [])].join('\n');
}

/** A conversation as Markdown: its title and sources, then each question and answer with its sources. */
export function transcript(conversation: ConversationView, messages: MessageView[]): string {
  const head = [
    `# ${conversation.title ?? 'Untitled conversation'}`,
    '',
    `Conversation ${conversation.id}` +
      (conversation.bookIds.length ? `, on book ${conversation.bookIds.join(', ')}` : '') +
      (conversation.readingPosition !== null ? `, read up to chapter ${conversation.readingPosition}` : ''),
  ];
  const body = messages
    .filter((m) => m.role !== 'tool_result')
    .flatMap((m) => {
      const who = m.role === 'user' ? '## Reader' : '## Parley';
      const quoted = m.selectedText ? [`> ${m.selectedText.replace(/\n/g, '\n> ')}`, ''] : [];
      const sources = (m.citations as Citation[]).map((c) => `- ${citationLabel(c)}`);
      return ['', who, '', ...quoted, m.content, ...(sources.length ? ['', 'Sources:', ...sources] : [])];
    });
  return [...head, ...body].join('\n') + '\n';
}
