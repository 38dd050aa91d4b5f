import { BatchLink } from '@parley/conversation';
import { deterministicId } from '@parley/event-store';
import { StoredPost } from '@parley/read-models';
import { problem } from '../http/problem.exception';

/** A post's body: what a repeat with the same Idempotency-Key must carry again. */
export interface PostBody {
  content: string;
  selectedText?: string;
  /** set by a batch's independent prompts, not by clients */
  batch?: BatchLink;
}

export interface PostResult {
  messageId: string;
  turnId: string;
  version: number;
  position: string;
  /** turns this post cancelled (multitask=interrupt); not part of the response */
  interrupted?: string[];
}

/** Ids of a post's message, turn and events, derived from its Idempotency-Key. */
export function postIdFor(userId: string, conversationId: string, key: string): (what: string) => string {
  return (what) => deterministicId(userId, conversationId, key, what);
}

/** The id of a keyed post's UserMessagePosted (how an earlier post is found). */
export function postedEventId(idFor: (what: string) => string): string {
  return idFor(`event:UserMessagePosted:${idFor('turn')}`);
}

/**
 * The answer to `input` given the stored UserMessagePosted of its Idempotency-Key. The event
 * holds the whole body, so comparing its fields needs no stored hash, also for old events.
 */
export function answerTo(input: PostBody, posted: StoredPost): PostResult {
  const data = posted.data;
  if (data.content !== input.content || data.selectedText !== input.selectedText) {
    throw problem(
      'idempotency_key_reused',
      'this Idempotency-Key was used for a message with another body: send a new message with a new key',
    );
  }
  return { messageId: data.messageId, turnId: data.turnId, version: posted.version, position: posted.position };
}

/** The body's fields a PostUserMessage carries (none that are undefined). */
export function postedFields(input: PostBody): PostBody {
  return {
    content: input.content,
    ...(input.selectedText !== undefined ? { selectedText: input.selectedText } : {}),
    ...(input.batch ? { batch: input.batch } : {}),
  };
}
