import { randomBytes } from 'node:crypto';
import {
  ChatOptions,
  ChatOutcome,
  ChatResult,
  LlmCitation,
  LlmClient,
  LlmDocumentBlock,
  LlmMessage,
  LlmToolSpec,
  ModelCapabilities,
} from './llm.types';

/**
 * The offline provider (LLM_PROVIDER=scripted): deterministic, same port. With a search tool it
 * searches the book for the question, then answers from the passages it got, citing them; so
 * the whole service works without a network and demos are repeatable. Given documents (whole-book
 * retrieval), it quotes the passage closest to the question and cites it as the provider would.
 */
export class ScriptedLlm implements LlmClient {
  readonly everyModelTakesTools = true;
  readonly model = 'scripted-1';

  capabilitiesOf(): ModelCapabilities {
    // the offline stand-in has no prompt cache: `auto` keeps its search loop, as before whole-book existed
    return { provider: 'scripted', tools: true, documents: 'uncached', batches: false };
  }

  async chatWithTools(messages: LlmMessage[], tools: LlmToolSpec[], options: ChatOptions): Promise<ChatOutcome> {
    return { kind: 'answered', result: await this.answer(messages, tools, options) };
  }

  private async answer(messages: LlmMessage[], tools: LlmToolSpec[], options: ChatOptions): Promise<ChatResult> {
    const last = messages[messages.length - 1];
    const results = last.role === 'user' ? last.content.filter((b) => b.type === 'tool_result') : [];
    const question = lastQuestion(messages);
    const documents = messages.flatMap((m) =>
      m.role === 'user' ? m.content.filter((b) => b.type === 'document') : [],
    );
    if (documents.length > 0) return this.citeDocument(documents, question, messages, options);
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
      ? answerFrom(results.map((r) => r.content).join('\n\n'), question)
      : `You asked: "${question}". I have no book passages to go on.`;
    for (const piece of text.match(/\S+\s*/g) ?? []) {
      options.signal?.throwIfAborted();
      options.onTextDelta?.(piece);
      await new Promise((r) => setImmediate(r));
    }
    return this.reply([{ type: 'text', text }], 'end_turn', messages);
  }

  /** Whole-book retrieval: quotes the passage of the documents that shares the most words with the question, and cites it. */
  private async citeDocument(
    documents: LlmDocumentBlock[],
    question: string,
    messages: LlmMessage[],
    options: ChatOptions,
  ): Promise<ChatResult> {
    const best = bestPassage(documents, question);
    if (!best) {
      const text = 'The chapters you have read do not say.';
      options.onTextDelta?.(text);
      return this.reply([{ type: 'text', text }], 'end_turn', messages);
    }
    const passage = documents[best.documentIndex].passages[best.block];
    const quote = `"${passage.replace(/\s+/g, ' ').trim().slice(0, 280)}"`;
    const intro = 'According to the book: ';
    options.onTextDelta?.(intro);
    options.onTextDelta?.(quote);
    const citation: LlmCitation = {
      type: 'block',
      documentIndex: best.documentIndex,
      startBlock: best.block,
      endBlock: best.block + 1,
      citedText: passage,
    };
    return this.reply(
      [
        { type: 'text', text: intro },
        { type: 'text', text: quote, citations: [citation] },
      ],
      'end_turn',
      messages,
    );
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

/** The passage sharing the most words (of 4 letters or more) with the question; the first one when none does. */
function bestPassage(documents: LlmDocumentBlock[], question: string): { documentIndex: number; block: number } | null {
  const words = new Set((question.toLowerCase().match(/[a-z]{4,}/g) ?? []).map((w) => w));
  let best: { documentIndex: number; block: number; score: number } | null = null;
  documents.forEach((d, documentIndex) =>
    d.passages.forEach((text, block) => {
      const score = new Set((text.toLowerCase().match(/[a-z]{4,}/g) ?? []).filter((w) => words.has(w))).size;
      if (!best || score > best.score) best = { documentIndex, block, score };
    }),
  );
  return best;
}

/** The words of 4 letters or more, lower-cased: what the question and a passage are matched on. */
const wordsOf = (text: string) => new Set(text.toLowerCase().match(/[a-z]{4,}/g) ?? []);

/**
 * Quotes the sentence of the numbered passages that shares the most words with the question (the
 * best-ranked passage first on a tie), from its start, and cites its passage: "Who did Alice meet
 * sitting on a mushroom?" finds the Caterpillar "sitting on the top" of the mushroom, though it
 * closes the first passage. With no word in common, the opening of the first passage.
 */
function answerFrom(results: string, question: string): string {
  const passages = [...results.matchAll(/\[(\d+)\][^\n]*\n([\s\S]*?)(?=\n\n\[\d+\]|$)/g)];
  if (!passages.length) return 'The book has no passage about that in the chapters you have read.';
  const asked = wordsOf(question);
  let best = { n: passages[0][1], sentence: passages[0][2], score: 0 };
  for (const [, n, text] of passages)
    for (const sentence of text.split(/(?<=[.!?]['"]?)\s+/)) {
      const score = [...wordsOf(sentence)].filter((w) => asked.has(w)).length;
      if (score > best.score) best = { n, sentence, score };
    }
  const excerpt = best.sentence.replace(/\s+/g, ' ').trim().slice(0, 280);
  return `According to the book: "${excerpt}…" [${best.n}]`;
}
