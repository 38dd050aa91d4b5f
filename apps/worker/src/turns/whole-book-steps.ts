import { Logger } from '@nestjs/common';
import {
  bookDocuments,
  buildHistory,
  ChatResult,
  citedFromDocuments,
  LlmClient,
  readerNote,
  renderPrompt,
  wholeBookLimit,
  withBooks,
} from '@parley/agent';
import { turnReader, WholeBooks } from '@parley/books';
import { AppConfig } from '@parley/config';
import { LoadedTurn } from './conversation-folds';
import { ModelReply, StepResult } from './model-reply';

/**
 * Whole-book retrieval: whether a turn reads the whole book (the mode, the provider, the size of
 * the books up to the reading position), and its one answering call with the books as documents
 * the model cites, no tools offered.
 */
export class WholeBookSteps {
  private readonly logger = new Logger(WholeBookSteps.name);

  constructor(
    private readonly llm: Pick<LlmClient, 'documents' | 'documentsFor'>,
    private readonly model: ModelReply,
    private readonly books: WholeBooks,
    private readonly config: Pick<AppConfig, 'llm'>,
  ) {}

  /**
   * `whole-book`: yes, when the books up to the reading position fit what the model's window
   * leaves beside the history; `auto`: when they also fit WHOLE_BOOK_MAX_TOKENS. Otherwise (and
   * with a provider that takes no documents, or no book) the turn searches as `auto` would.
   * `auto` reads whole books only where the provider's prompt cache makes them cheap (`cached`).
   */
  async reads(loaded: LoadedTurn): Promise<boolean> {
    const mode = loaded.settings.retrievalMode;
    if (mode !== 'whole-book' && mode !== 'auto') return false;
    const documents = this.llm.documentsFor?.(loaded.settings.model) ?? this.llm.documents;
    if (!documents || (mode === 'auto' && documents !== 'cached')) return false;
    if (loaded.ctx.bookIds.length === 0 || !loaded.turn) return false;
    const tokens = await this.books.tokensUpTo(turnReader(loaded.ctx), loaded.ctx.bookIds, loaded.ctx.readingPosition);
    if (tokens === null) return false; // a book gone or not ready: search says so
    const limit = wholeBookLimit(mode, {
      maxTokens: this.config.llm.wholeBook.maxTokens,
      historyBudgetTokens: loaded.settings.budgetTokens,
      answerTokens: this.config.llm.maxTokens,
    });
    if (tokens > limit && mode === 'whole-book')
      this.logger.warn(
        `turn ${loaded.turn.turnId}: the books (${tokens} tokens) do not fit the model's window (${limit}): searching instead`,
      );
    return tokens <= limit;
  }

  /** The answer with the books up to the reading position in the prompt; the history after them, without tool exchanges. */
  async answer(loaded: LoadedTurn, iteration: number, signal: AbortSignal): Promise<StepResult> {
    const turn = loaded.turn!;
    const { bookIds, readingPosition } = loaded.ctx;
    const books = await this.books.upTo(turnReader(loaded.ctx), bookIds, readingPosition);
    const ttl = this.config.llm.wholeBook.cacheTtl;
    // the 5-minute entry is the API's default: left unsaid, the request is the same as without the setting
    const { documents, sources } = bookDocuments(books, ttl === '1h' ? ttl : undefined);
    const history = buildHistory(loaded.turns, turn.turnId, loaded.settings.budgetTokens, { withTools: false });
    const messages = withBooks(history.messages, documents, readerNote(readingPosition, loaded.settings.instructions));
    const cite = (result: ChatResult) => {
      const answer = citedFromDocuments(result, sources, { severalBooks: bookIds.length > 1 });
      for (const s of answer.stray)
        this.logger.warn(
          `turn ${turn.turnId}: a citation of document ${s.documentIndex} (${s.where}) points outside what was sent: dropped`,
        );
      return answer;
    };
    return this.model.reply(loaded, {
      messages,
      prefixEnd: history.prefixEnd,
      tools: [],
      iteration,
      allowTools: false,
      signal,
      wholeBook: { system: renderPrompt('whole_book_system_prompt', {}), cite },
    });
  }
}
