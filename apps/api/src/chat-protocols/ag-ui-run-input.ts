import { contentToText, RunAgentInput } from '@ag-ui/core';
import { RunAgentInputSchema } from '@ag-ui/core/schemas';
import { invalid } from '../http/problem.exception';
import { isUuid } from '@parley/platform';

/** A RunAgentInput as Parley reads it. */
export interface AgUiRun {
  threadId: string;
  runId: string;
  /** the last message's text, the reader's */
  text: string;
}

/**
 * The body checked with the protocol's own RunAgentInputSchema; `threadId` must be the
 * conversation's id and the last message the reader's. Anything else is a 400 naming the field.
 */
export function agUiRunOf(body: unknown): AgUiRun {
  const parsed = RunAgentInputSchema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue.path.length > 0 ? issue.path.join('.') : 'body';
    throw invalid(field, `not a RunAgentInput: ${field} ${issue.message}`);
  }
  const input = parsed.data as RunAgentInput;
  if (!isUuid(input.threadId))
    throw invalid('threadId', "threadId must be the conversation's id, a UUID (POST /v1/conversations starts one)");
  const last = input.messages[input.messages.length - 1];
  if (last?.role !== 'user') throw invalid('messages', "the last message must be the reader's (role user)");
  return { threadId: input.threadId, runId: input.runId, text: contentToText(last.content) };
}
