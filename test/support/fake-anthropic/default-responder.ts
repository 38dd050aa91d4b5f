/**
 * What the fake answers when no step is scripted: the tools the question names with `CALL:<tool>`
 * (test/support/tool-directives.ts), one after another, then what they said; else one search-style
 * tool call for a fresh question, then an answer citing [1] once tool results came back. Enough for a product's
 * agent loop to run a whole turn without a script. Given documents with citations enabled, it
 * quotes the passage closest to the question and cites it (content_block_location).
 */
import type { FakeReply, RecordedRequest } from './fake-anthropic.types';
import { citableDocuments, closestBlock } from './documents';
import { asBlocks } from './validate-request';
import { nextDirectiveStep } from '../tool-directives';

const SUMMARY_CHARS = 80;

export function defaultReply(req: RecordedRequest): FakeReply {
  const lastUser = [...(req.body.messages ?? [])].reverse().find((m: any) => m.role === 'user');
  const blocks = asBlocks(lastUser?.content);
  const question = textOf(blocks.filter((b) => b.type === 'text'));
  const results = blocks.filter((b) => b.type === 'tool_result');
  // the tool a question goes to: the first one that takes a query (search_book beside the reading tools)
  const searchTool = req.body.tools?.find((t: any) => t.input_schema?.properties?.query);
  const directed = directedReply(req);
  if (directed) return directed;
  const documents = citableDocuments(req.body);
  if (documents.length > 0 && results.length === 0) {
    // documents with citations: quote the passage closest to the question and cite it
    const cite = closestBlock(documents, question)!;
    const quoted = documents[cite.document].blocks.slice(cite.start ?? 0, cite.end ?? 1).join('');
    return {
      content: [
        { type: 'text', text: 'The book says: ' },
        { type: 'text', text: `"${summarize(quoted)}"`, cite: [cite] },
      ],
    };
  }

  if (searchTool && results.length === 0) {
    return { content: [{ type: 'tool_use', name: searchTool.name, input: { query: question } }] };
  }
  if (results.length > 0) {
    const found = results.map((r) => textOf(asBlocks(r.content))).join(' ');
    return { content: [{ type: 'text', text: `Answer: ${summarize(found)} [1]` }] };
  }
  return { content: [{ type: 'text', text: `Answer: ${summarize(question)}` }] };
}

/** The next step of a question's `CALL:` directives: the calls this turn made so far are after the question. */
function directedReply(req: RecordedRequest): FakeReply | null {
  const messages: Array<{ role: string; content: unknown }> = req.body.messages ?? [];
  const asked = messages.map((m) => m.role === 'user' && asBlocks(m.content).some((b) => b.type === 'text'));
  const at = asked.lastIndexOf(true);
  if (at < 0) return null;
  const question = textOf(asBlocks(messages[at].content).filter((b) => b.type === 'text'));
  const since = messages.slice(at + 1).flatMap((m) => asBlocks(m.content));
  const step = nextDirectiveStep(
    question,
    (req.body.tools ?? []).map((t: any) => t.name),
    since.filter((b) => b.type === 'tool_use').length,
    since.filter((b) => b.type === 'tool_result').map((r) => textOf(asBlocks(r.content))),
  );
  if (!step) return null;
  if ('text' in step) return { content: [{ type: 'text', text: step.text }] };
  return { content: [{ type: 'tool_use', name: step.call.name, input: step.call.input }] };
}

function textOf(blocks: any[]): string {
  return blocks.map((b) => b.text ?? '').join(' ');
}

function summarize(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > SUMMARY_CHARS ? flat.slice(0, SUMMARY_CHARS - 1) + '…' : flat || '(nothing to go on)';
}
