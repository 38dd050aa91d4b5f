import { safeValidateUIMessages, UIMessage } from 'ai';
import { invalid } from '../http/problem.exception';
import { isUuid } from '@parley/platform';

/** The AI SDK DefaultChatTransport's body, as Parley reads it. */
export interface ChatRequest {
  conversationId: string;
  /** the text of the last message, the reader's */
  text: string;
  /** a retried send of the same user message is the same post; a regenerate is a new one */
  idempotencyKey?: string;
}

/**
 * `{ id, messages, trigger?, messageId? }` as the transport sends it: `id` is the conversation's
 * id, `messages` the chat's UIMessages (checked with the SDK's own validateUIMessages), the last
 * one the reader's message to post. Anything else is a 400 validation_failed naming the field.
 */
export async function chatRequestOf(body: unknown): Promise<ChatRequest> {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw invalid('body', "the body must be the chat transport's JSON object: { id, messages }");
  const { id, messages, trigger } = body as Record<string, unknown>;
  if (!isUuid(id)) throw invalid('id', "id must be the conversation's id, a UUID (POST /v1/conversations starts one)");
  if (!Array.isArray(messages) || messages.length === 0)
    throw invalid('messages', 'messages must be a non-empty array of UIMessages');
  const checked = await safeValidateUIMessages<UIMessage>({ messages });
  if (!checked.success) throw invalid('messages', `messages must be UIMessages: ${firstLine(checked.error.message)}`);
  const last = checked.data[checked.data.length - 1];
  if (last.role !== 'user') throw invalid('messages', "the last message must be the reader's (role user)");
  const text = last.parts.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('\n');
  return {
    conversationId: id,
    text,
    idempotencyKey: trigger === 'regenerate-message' ? undefined : `ai-sdk:${last.id}`,
  };
}

const firstLine = (s: string) => s.split('\n')[0].slice(0, 300);
