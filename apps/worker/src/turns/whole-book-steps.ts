import { Logger } from '@nestjs/common';
import { SearchedInstead } from '@parley/conversation';
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
import { TurnView } from './conversation-folds';
import { ModelReply, StepResult } from './model-reply';

/**
 * Whole-book retrieval: whether a turn reads the whole book (the mode, the provider, the size of
 * the books up to the reading position), and its one answering call with the books as documents
 * the model cites, no tools offered.
 */
export class WholeBookSteps {
  private readonly logger = new Logger(WholeBookSteps.name);

  constructor(
    private readonly llm: Pick<LlmClient, 'capabilitiesOf'>,
    private readonly model: ModelReply,
    private readonly books: WholeBooks,
    private readonly config: Pick<AppConfig, 'llm'>,
  ) {}

  /** Whether the turn reads its books whole (the plan goes by it). */
  async reads(view: TurnView): Promise<boolean> {
    return (await this.choice(view)).reads;
  }

  /** A `whole-book` turn that searches: why, for its answer to record (undefined in any other mode). */
  async searchedInstead(view: TurnView): Promise<SearchedInstead | undefined> {
    if (view.settings.retrievalMode !== 'whole-book') return undefined;
    const choice = await this.choice(view);
    return choice.reads ? undefined : choice.searchedInstead;
  }

  /**
   * `whole-book` and `auto` read the books whole when, up to the reading position, they fit
   * WHOLE_BOOK_MAX_TOKENS and what the model's window leaves beside the history, and the reader
   * may read each of them now. Otherwise (and with a provider that takes no documents, or no
   * book) the turn searches as `auto` would. `auto` reads whole books only where the provider's
   * prompt cache makes them cheap (`cached`).
   */
  private async choice(view: TurnView): Promise<{ reads: true } | { reads: false; searchedInstead?: SearchedInstead }> {
    const mode = view.settings.retrievalMode;
    if (mode !== 'whole-book' && mode !== 'auto') return { reads: false };
    if (view.ctx.bookIds.length === 0) return { reads: false };
    const { documents } = this.llm.capabilitiesOf(view.settings.model);
    if (!documents) return { reads: false, searchedInstead: { reason: 'provider_takes_no_documents' } };
    if (mode === 'auto' && documents !== 'cached') return { reads: false };
    const tokens = await this.books.tokensUpTo(turnReader(view.ctx), view.ctx.bookIds, view.ctx.readingPosition);
    // a book gone, not ready or not the reader's now: the search says so
    if (tokens === null) return { reads: false, searchedInstead: { reason: 'books_unavailable' } };
    const limit = wholeBookLimit({
      maxTokens: this.config.llm.wholeBook.maxTokens,
      historyBudgetTokens: view.settings.budgetTokens,
      answerTokens: this.config.llm.maxTokens,
    });
    if (tokens <= limit) return { reads: true };
    return { reads: false, searchedInstead: { reason: 'books_too_large', bookTokens: tokens, limitTokens: limit } };
  }

  /** The answer with the books up to the reading position in the prompt; the history after them, without tool exchanges. */
  async answer(view: TurnView, iteration: number, signal: AbortSignal): Promise<StepResult> {
    const { turn } = view;
    const { bookIds, readingPosition } = view.ctx;
    const books = await this.books.upTo(turnReader(view.ctx), bookIds, readingPosition);
    const ttl = this.config.llm.wholeBook.cacheTtl;
    // the 5-minute entry is the API's default: left unsaid, the request is the same as without the setting
    const { documents, sources } = bookDocuments(books, ttl === '1h' ? ttl : undefined);
    const history = buildHistory(view.folded.turns, turn.turnId, view.settings.budgetTokens, { withTools: false });
    const messages = withBooks(history.messages, documents, readerNote(readingPosition, view.settings.instructions));
    const cite = (result: ChatResult) => {
      const answer = citedFromDocuments(result, sources, { severalBooks: bookIds.length > 1 });
      for (const s of answer.stray)
        this.logger.warn(
          `turn ${turn.turnId}: a citation of document ${s.documentIndex} (${s.where}) points outside what was sent: dropped`,
        );
      return answer;
    };
    return this.model.reply(view, {
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
