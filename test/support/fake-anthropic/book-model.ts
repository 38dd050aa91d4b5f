import { FakeError, FakeReply, RecordedRequest } from './fake-anthropic.types';
import { questionOf } from './questions';

/**
 * A fake model for the chat protocols' suites: searches the book once, then answers citing [1];
 * a question with SLOW streams its answer for seconds, one with FAIL gets a 400 (TurnFailed).
 */
export function bookModel(req: RecordedRequest): FakeReply | FakeError {
  const msgs = req.body.messages;
  const last = msgs[msgs.length - 1];
  const hasResults = Array.isArray(last.content) && last.content.some((b: any) => b.type === 'tool_result');
  const q = questionOf(req);
  if (q.includes('FAIL')) return { error: { status: 400, type: 'invalid_request_error', message: 'scripted failure' } };
  const toolsAllowed = req.body.tools?.length && req.body.tool_choice?.type !== 'none';
  if (!hasResults && toolsAllowed)
    return { content: [{ type: 'tool_use', name: 'search_book', input: { query: q.replace(/\W+/g, ' ').trim() } }] };
  if (q.includes('SLOW')) return { content: [{ type: 'text', text: 'word '.repeat(200) }], delayMsPerChunk: 25 };
  return { content: [{ type: 'text', text: 'The book says she carried a brass telescope. [1]' }] };
}
