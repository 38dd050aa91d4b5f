/**
 * Plain-text views of books, conversations, citations, tool calls and events, shared by the chat,
 * the list commands and replay. Colour only on a terminal, and never with NO_COLOR set.
 */
import type { AssistantReplied, Citation, EventEnvelope, ToolInvoked, ToolResultRecorded, TurnFailed } from './types';

const colour = process.stdout.isTTY === true && !process.env.NO_COLOR;
const sgr = (on: number, off: number) => (s: string) => (colour ? `\x1b[${on}m${s}\x1b[${off}m` : s);
export const dim = sgr(2, 22);
export const bold = sgr(1, 22);
export const red = sgr(31, 39);
export const cyan = sgr(36, 39);

/** One line, at most `max` characters: whitespace folded, an ellipsis where it was cut. */
export function oneLine(text: string, max = 100): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? flat.slice(0, max - 1) + '…' : flat;
}

export function citationLabel(c: Citation): string {
  const parts = [c.chapter || (c.chapterIndex !== undefined ? `chapter ${c.chapterIndex}` : 'passage')];
  if (c.section) parts.push(c.section);
  if (c.page !== null && c.page !== undefined) parts.push(`p. ${c.page}`);
  return parts.join(', ');
}

/**
 * The answer's sources, each with the [n] the answer uses for it when the turn's search results
 * say which number that passage had (`numbers`: chunkId → n); a passage the provider cited from
 * the whole book (it has a `quote`) is [its place in the list], with the words quoted.
 */
export function citationLines(citations: Citation[], numbers: Map<string, number>): string[] {
  return citations.map((c, i) => {
    const n = numbers.get(c.chunkId) ?? (c.quote !== undefined ? i + 1 : undefined);
    const quote = c.quote !== undefined ? ` "${oneLine(c.quote, 80)}"` : '';
    return `  ${n !== undefined ? `[${n}]` : '•'} ${citationLabel(c)}${quote}`;
  });
}

/** Records which [n] each passage of a search result had (numbers run on across a turn). */
export function noteNumbers(r: ToolResultRecorded, numbers: Map<string, number>): void {
  if (r.citationStart === undefined) return;
  r.chunks?.forEach((c, i) => numbers.set(c.chunkId, r.citationStart! + i));
}

export function toolCallLine(t: ToolInvoked): string {
  const input = t.input && typeof t.input === 'object' ? (t.input as Record<string, unknown>) : {};
  const args =
    typeof input.query === 'string' && Object.keys(input).length <= 2
      ? JSON.stringify(input.query) + (input.k !== undefined ? ` k=${String(input.k)}` : '')
      : oneLine(JSON.stringify(t.input ?? {}), 80);
  return `${t.name} ${args}`;
}

export function toolResultLine(r: ToolResultRecorded): string {
  if (r.isError) return `error: ${oneLine(r.content, 90)}`;
  if (r.chunks && r.chunks.length > 0) {
    const chapters = [...new Set(r.chunks.map((c) => c.chapter))].slice(0, 3).map((c) => oneLine(c, 30));
    const more = new Set(r.chunks.map((c) => c.chapter)).size > 3 ? ', …' : '';
    return `${r.chunks.length} passage${r.chunks.length === 1 ? '' : 's'} (${chapters.join('; ')}${more})`;
  }
  return oneLine(r.content || '(empty)', 90);
}

export function costLine(r: AssistantReplied): string {
  const u = r.usage;
  const cached = u?.cacheReadInputTokens ? `, ${u.cacheReadInputTokens} cached` : '';
  const calls = `${r.iterations} model call${r.iterations === 1 ? '' : 's'}`;
  const tokens = u ? `, ${u.inputTokens} in / ${u.outputTokens} out tokens${cached}` : '';
  const secs = r.latencyMs !== undefined ? `, ${(r.latencyMs / 1000).toFixed(1)} s` : '';
  return `${calls}${tokens}, $${(r.costUsd ?? 0).toFixed(4)}${secs} (${r.model})`;
}

export function failureLine(f: TurnFailed): string {
  return `the answer failed: ${f.message} (${f.code})${f.retryable ? '; posting again may work' : ''}`;
}

export function positionLabel(p: number | null | undefined): string {
  return p === null || p === undefined ? 'the whole book' : `up to chapter ${p}`;
}

export function time(iso: string): string {
  return iso.slice(11, 19);
}

/**
 * The event log as people read it: who said what, which tool ran with what and what it found,
 * and what each turn cost. `numbers` carries the [n] of passages from one event to the next.
 */
export function eventLines(e: EventEnvelope, numbers: Map<string, number>): string[] {
  const who = e.metadata?.userId ?? '?';
  const head = `${dim(`#${String(e.version).padEnd(3)} ${time(e.occurredAt)}`)} `;
  const d = e.data;
  switch (e.type) {
    case 'ConversationStarted': {
      const fork = d.forkedFrom as { conversationId: string; version: number } | undefined;
      const about = d.bookId ? `book ${String(d.bookId)}` : 'no book';
      const title = d.title ? ` "${String(d.title)}"` : '';
      const from = fork ? `, forked from ${fork.conversationId} at #${fork.version}` : '';
      return [
        `${head}${who} started a conversation${title} about ${about}, ${positionLabel(d.readingPosition as number | null)}${from}`,
      ];
    }
    case 'ConversationRenamed':
      return [`${head}${who} renamed it "${String(d.title)}"`];
    case 'ReadingPositionChanged':
      return [`${head}${who} moved the reading position to ${positionLabel(d.readingPosition as number | null)}`];
    case 'UserMessagePosted':
      return [`${head}${bold(who)}: ${String(d.content)}`];
    case 'ToolInvoked': {
      const t = e.data;
      const said = t.assistantText?.trim() ? [`${head}${bold('agent')}: ${t.assistantText.trim()}`] : [];
      return [...said, `${said.length ? ' '.repeat(14) : head}${cyan('agent ran')} ${toolCallLine(t)}`];
    }
    case 'ToolResultRecorded': {
      const r = e.data;
      noteNumbers(r, numbers);
      return [`${head}${cyan('tool gave')} ${toolResultLine(r)}`];
    }
    case 'AssistantReplied': {
      const r = e.data;
      return [
        `${head}${bold('agent')}: ${r.content}`,
        ...citationLines(r.citations ?? [], numbers),
        `  ${dim(`turn: ${costLine(r)}`)}`,
      ];
    }
    case 'TurnFailed':
      return [`${head}${red(failureLine(e.data))}`];
    case 'TurnCancelled':
      return [`${head}${dim('the answer was cancelled')}`];
    case 'ConversationDeleted':
      return [`${head}${who} deleted the conversation`];
    case 'ConversationErased':
      return [`${head}the conversation was erased`];
    default: // a type a newer server writes
      return [`${head}${(e as { type: string }).type}`];
  }
}
