/**
 * @parley/client: Parley's typed HTTP client, generated from docs/openapi.json (`npm run openapi`
 * regenerates schema.ts): the paths, bodies and answers are the document's, so a change of the API
 * that the document does not state fails to compile here and in every client built on it (the CLI,
 * the web page, the tests). README.md beside this folder shows its use.
 */
export type { components, operations, paths } from './schema';
export { createParleyClient, type ParleyClient, type ParleyClientOptions } from './client';
export {
  CONVERSATION_EVENT_TYPES,
  STREAM_ENDING_TYPES,
  TURN_ENDING_TYPES,
  isConversationEventType,
  type AssistantTextDelta,
  type ConversationEvent,
  type ConversationEventType,
  type EventOf,
  type TextDeltaItem,
} from './events';
export {
  type Book,
  type BookProgress,
  type BookProgressStream,
  type ConversationStream,
  type ConversationStreamItem,
  type StreamOptions,
  type StreamStatus,
} from './streams';
export { ParleyApiError, formatUsd, readBudgetExceeded, readProblem, type BudgetExceeded } from './problems';

import type { components } from './schema';
/** The document's schemas by name, e.g. `Schemas['ConversationDto']`. */
export type Schemas = components['schemas'];
