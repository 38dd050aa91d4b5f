import { RecordedRequest } from './fake-anthropic.types';

/** What the current turn's user asked (the last user text that is not a tool result): what a test's fake model answers by. */
export function questionOf(req: RecordedRequest): string {
  const msgs = req.body.messages as Array<{ role: string; content: unknown }>;
  for (let i = msgs.length - 1; i >= 0; i--) {
    const m = msgs[i];
    if (m.role !== 'user' || !Array.isArray(m.content)) continue;
    const texts = m.content.filter((b: { type: string }) => b.type === 'text').map((b: { text: string }) => b.text);
    if (texts.length) return texts[texts.length - 1];
  }
  return '';
}
