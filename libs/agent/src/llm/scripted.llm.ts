import { randomBytes } from 'node:crypto';
import { ChatOptions, ChatOutcome, ChatResult, LlmClient, LlmMessage, LlmToolSpec } from './llm.types';

/**
 * The offline provider (LLM_PROVIDER=scripted): deterministic, same port. With a search tool it
 * searches the book for the question, then answers from the passages it got, citing them; so
 * the whole service works without a network and demos are repeatable.
 */
export class ScriptedLlm implements LlmClient {
  readonly provider = 'scripted';
  readonly supportsTools = true;
  readonly supportsBatches = false;
  readonly model = 'scripted-1';

  async chatWithTools(messages: LlmMessage[], tools: LlmToolSpec[], options: ChatOptions): Promise<ChatOutcome> {
    return { kind: 'answered', result: await this.answer(messages, tools, options) };
  }

  private async answer(messages: LlmMessage[], tools: LlmToolSpec[], options: ChatOptions): Promise<ChatResult> {
    const last = messages[messages.length - 1];
    const results = last.role === 'user' ? last.content.filter((b) => b.type === 'tool_result') : [];
    const question = lastQuestion(messages);
    const search = tools.find((t) => t.name === 'search_book');
    if (search && results.length === 0 && options.toolChoice !== 'none') {
      return this.reply(
        [
          { type: 'text', text: 'Let me look that up in the book.' },
          { type: 'tool_use', id: newToolUseId(), name: search.name, input: { query: question } },
        ],
        'tool_use',
        messages,
      );
    }
    // the always-retrieve helper prompts (search query, HyDE passage): the question itself will do
    const asked =
      tools.length === 0 && !results.length ? /\nLast question: ([^\n]+)\s*$/.exec(lastUserText(messages)) : null;
    if (asked) return this.reply([{ type: 'text', text: asked[1].trim() }], 'end_turn', messages);
    const text = results.length
      ? answerFrom(results.map((r) => r.content).join('\n\n'))
      : `You asked: "${question}". I have no book passages to go on.`;
    for (const piece of text.match(/\S+\s*/g) ?? []) {
      options.signal?.throwIfAborted();
      options.onTextDelta?.(piece);
      await new Promise((r) => setImmediate(r));
    }
    return this.reply([{ type: 'text', text }], 'end_turn', messages);
  }

  private reply(content: ChatResult['content'], stopReason: string, messages: LlmMessage[]): ChatResult {
    const inputTokens = Math.ceil(JSON.stringify(messages).length / 4);
    const outputTokens = Math.ceil(JSON.stringify(content).length / 4);
    return {
      content,
      stopReason,
      model: this.model,
      usage: { inputTokens, outputTokens, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 },
    };
  }
}

/** Unique like Anthropic's `toolu_…` ids: the log and the read models tell tool calls apart by them. */
function newToolUseId(): string {
  return `toolu_${randomBytes(12).toString('hex')}`;
}

function lastQuestion(messages: LlmMessage[]): string {
  return lastUserText(messages).slice(0, 500);
}

function lastUserText(messages: LlmMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m.role !== 'user') continue;
    const texts = m.content.filter((b) => b.type === 'text').map((b) => b.text);
    if (texts.length) return texts[texts.length - 1];
  }
  return '';
}

/** Quotes the opening of the first numbered passage and cites it. */
function answerFrom(results: string): string {
  const m = /\[(\d+)\][^\n]*\n([\s\S]*?)(?=\n\n\[\d+\]|$)/.exec(results);
  if (!m) return 'The book has no passage about that in the chapters you have read.';
  const excerpt = m[2].replace(/\s+/g, ' ').trim().slice(0, 280);
  return `According to the book: "${excerpt}…" [${m[1]}]`;
}
