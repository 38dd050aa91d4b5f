import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

type Block = CallToolResult['content'][number];

/**
 * What the model reads of a tool server's answer: its text blocks joined, other kinds of content
 * named in a line (the model cannot see an image through a tool result here), and, when nothing
 * else came, the structured result as JSON. At most `maxBytes` of UTF-8, cut with a note.
 */
export function resultText(result: Pick<CallToolResult, 'content' | 'structuredContent'>, maxBytes: number): string {
  const blocks = (result.content ?? []).map(blockText);
  if (blocks.length === 0 && result.structuredContent !== undefined)
    blocks.push(JSON.stringify(result.structuredContent));
  const text = blocks.join('\n');
  return cutToBytes(text === '' ? '(the tool answered with no content)' : text, maxBytes);
}

function blockText(block: Block): string {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'image':
    case 'audio':
      return `[${block.type}: ${block.mimeType}, ${base64Bytes(block.data)} bytes, not shown]`;
    case 'resource_link':
      return `[a link to ${block.name}: ${block.uri}${block.mimeType ? ` (${block.mimeType})` : ''}]`;
    case 'resource': {
      const r = block.resource;
      if ('text' in r && typeof r.text === 'string') return `[${r.uri}]\n${r.text}`;
      return `[${r.uri}: ${r.mimeType ?? 'binary'} content, not shown]`;
    }
    default:
      return `[content of the kind ${(block as { type: string }).type}, not shown]`;
  }
}

function base64Bytes(data: string): number {
  return Buffer.byteLength(data, 'base64');
}

/** `text` within `maxBytes` of UTF-8 (never half a character), with a note of what was cut. */
export function cutToBytes(text: string, maxBytes: number): string {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes <= maxBytes) return text;
  const note = (kept: number) => `\n[cut: the result was ${bytes} bytes; the first ${kept} are shown]`;
  const budget = maxBytes - Buffer.byteLength(note(maxBytes), 'utf8');
  // a cut inside a multi-byte character leaves U+FFFD at the end: drop it
  const kept = Buffer.from(text, 'utf8')
    .subarray(0, Math.max(0, budget))
    .toString('utf8')
    .replace(/\uFFFD$/, '');
  return kept + note(Buffer.byteLength(kept, 'utf8'));
}
