import {
  AgentCommand,
  answerOf,
  buildHistory,
  isHydeCall,
  LlmClient,
  newStep,
  renderPrompt,
  stoppedAttemptsOf,
  withStoppedAttempts,
} from '@parley/agent';
import { AppConfig } from '@parley/config';
import { BookNames } from './book-names';
import { TurnView } from './conversation-folds';
import { ModelReply, StepResult } from './model-reply';
import { transcriptOf } from './transcript';

/**
 * The always-retrieve plan, for providers without tool use (or the mode asked for): the question
 * turned into a search (and a HyDE passage), then the answer with the passages found in the prompt.
 */
export class AlwaysRetrieveSteps {
  constructor(
    private readonly llm: LlmClient,
    private readonly model: ModelReply,
    private readonly bookNames: BookNames,
    private readonly config: Pick<AppConfig, 'llm'>,
  ) {}

  /**
   * Turns the question into one self-contained query, recorded as the turn's search_book call;
   * with RETRIEVAL_HYDE, a second call at the same time writes a passage that would answer it,
   * recorded as a second search_book call (toolUseId `hyde_…`) with that passage as the query.
   */
  async reformulate(view: TurnView, signal: AbortSignal): Promise<AgentCommand> {
    const { turn, folded } = view;
    const earlier = folded.turns.slice(0, folded.turns.indexOf(turn)).slice(-3);
    const conversation = transcriptOf(earlier);
    const vars = {
      book: await this.bookNames.of(folded),
      conversation: conversation || '(none)',
      question: turn.content,
    };
    const ask = (prompt: string, system: string, maxTokens: number) =>
      this.llm
        .chatWithTools([{ role: 'user', content: [{ type: 'text', text: prompt }] }], [], {
          system,
          model: view.settings.model,
          maxTokens,
          signal,
        })
        .then(answerOf);
    const [queried, written] = await Promise.allSettled([
      ask(renderPrompt('reformulation_prompt', vars), 'You write search queries.', 200),
      this.config.llm.hyde
        ? ask(renderPrompt('hyde_passage', vars), 'You write short passages in the style of a book.', 300)
        : Promise.resolve(null),
    ]);
    if (queried.status === 'rejected' || written.status === 'rejected') {
      // both calls stop together on a cancel: the error thrown carries what either was billed
      const errors = [queried, written].flatMap((r) => (r.status === 'rejected' ? [r.reason as Error] : []));
      throw withStoppedAttempts(errors[0], errors.flatMap(stoppedAttemptsOf));
    }
    return {
      type: 'RecordSearches',
      turnId: turn.turnId,
      ...newStep(),
      reformulated: queried.value,
      hyde: written.value,
    };
  }

  /** The answer with the retrieved passages in the prompt, no tools offered. */
  async answerFromPassages(view: TurnView, signal: AbortSignal): Promise<StepResult> {
    const { turn } = view;
    // a HyDE search that found nothing new adds nothing to read
    const passages = turn.iterations
      .flatMap((it) => [...it.results].filter(([id, r]) => !isHydeCall(id) || r.chunks.length > 0))
      .map(([, r]) => r.content)
      .join('\n\n');
    const currentMessages = [
      {
        role: 'user' as const,
        content: [
          ...(turn.sourcesNote ? [{ type: 'text' as const, text: turn.sourcesNote }] : []),
          ...(turn.selectedText
            ? [
                {
                  type: 'text' as const,
                  text: `The reader highlighted this passage:\n<selected_text>\n${turn.selectedText}\n</selected_text>`,
                },
              ]
            : []),
          { type: 'text' as const, text: renderPrompt('always_retrieve_answer', { passages, question: turn.content }) },
        ],
      },
    ];
    const { messages, prefixEnd } = buildHistory(view.folded.turns, turn.turnId, view.settings.budgetTokens, {
      withTools: false,
      currentMessages,
    });
    return this.model.reply(view, {
      messages,
      prefixEnd,
      tools: [],
      iteration: turn.iterations.length + 1,
      allowTools: false,
      signal,
    });
  }
}
