import { LlmError, TOOLS_UNSUPPORTED, usesAlwaysRetrieve } from '@parley/agent';
import { TurnView } from './conversation-folds';

/**
 * Whether a turn's first call, refused because its model has no tool use, is answered by the
 * always-retrieve plan instead: in the `auto` retrieval mode, when nothing of the turn is recorded
 * yet. A turn whose policy asks for `tools` fails (`llm_tools_unsupported`) rather than answer
 * without the search it was promised.
 */
export function retrievesAfterToolRefusal(e: unknown, view: TurnView, iteration: number): boolean {
  return (
    e instanceof LlmError &&
    e.code === TOOLS_UNSUPPORTED &&
    iteration === 1 &&
    usesAlwaysRetrieve(view.settings.retrievalMode, false)
  );
}
