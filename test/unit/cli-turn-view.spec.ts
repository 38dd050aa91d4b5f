/** The chat's turn view: streamed text is printed once, whatever the deltas and events do. */
import { TurnView } from '../../scripts/cli/turn-view';
import type { EventEnvelope, TextDelta } from '../../scripts/cli/types';

const TURN = 't1';
let version = 0;
// fixtures carry only the fields the view reads, hence the cast
const event = (type: string, data: Record<string, unknown>): EventEnvelope =>
  ({
    id: `e${++version}`,
    type,
    conversationId: 'c',
    version,
    position: String(version),
    occurredAt: new Date().toISOString(),
    data: { turnId: TURN, ...data },
    metadata: { userId: 'u' },
  }) as EventEnvelope;
const delta = (text: string, index: number, iteration = 1, attempt = 1): TextDelta => ({
  turnId: TURN,
  iteration,
  attempt,
  index,
  text,
});
const replied = (content: string, iterations = 1) =>
  event('AssistantReplied', { content, iterations, citations: [], usage: null, costUsd: 0, model: 'm' });

function view(verbose = false) {
  let out = '';
  const v = new TurnView(TURN, (s) => (out += s), verbose);
  // eslint-disable-next-line no-control-regex
  return { v, out: () => out.replace(/\x1b\[\d+m/g, '') }; // colours, when the test runs on a terminal
}

describe('TurnView', () => {
  it('prints the deltas as they come, and only the rest of the stored text', () => {
    const { v, out } = view();
    v.delta(delta('Alice ', 0));
    v.delta(delta('met ', 1));
    expect(out()).toBe('Alice met ');
    expect(v.event(replied('Alice met a Caterpillar.'))).toBe(true);
    expect(out()).toBe('Alice met a Caterpillar.\n');
  });

  it('after a missed delta stops the preview and fills in from the stored text, without repeats', () => {
    const { v, out } = view();
    v.delta(delta('one ', 0));
    v.delta(delta('three ', 2)); // index 1 was lost with the connection
    v.delta(delta('four', 3));
    expect(out()).toBe('one ');
    v.event(replied('one two three four'));
    expect(out()).toBe('one two three four\n');
  });

  it('ignores deltas of other turns, of finished model calls, and after the turn ended', () => {
    const { v, out } = view();
    v.delta({ ...delta('other', 0), turnId: 't2' });
    v.delta(delta('Let me look.', 0, 1));
    v.event(event('ToolInvoked', { iteration: 1, assistantText: 'Let me look.', name: 'search_book', input: {} }));
    v.delta(delta('Let me look.', 0, 1)); // a late duplicate of iteration 1
    v.delta(delta('Found it.', 0, 2));
    v.event(replied('Found it.', 2));
    v.delta(delta(' late', 1, 2));
    expect(out()).toBe('Let me look.\nFound it.\n');
  });

  it('says so when the model call started over, and keeps only the new attempt', () => {
    const { v, out } = view();
    v.delta(delta('Half an ans', 0, 1, 1));
    v.delta(delta('A whole ', 0, 1, 2));
    v.delta(delta('answer.', 1, 1, 2));
    v.event(replied('A whole answer.'));
    expect(out()).toBe('Half an ans\n(the model started its answer again)\nA whole answer.\n');
  });

  it('prints nothing more once muted (Ctrl-C), then the cancel', () => {
    const { v, out } = view(true);
    v.delta(delta('Some ', 0));
    v.mute();
    v.delta(delta('more', 1));
    v.event(event('ToolInvoked', { iteration: 1, assistantText: 'Some more', name: 'search_book', input: {} }));
    expect(v.event(event('TurnCancelled', {}))).toBe(true);
    expect(out()).toBe('Some \n(cancelled)\n');
  });

  it('numbers the sources as the answer does, from the search results', () => {
    const { v, out } = view();
    const chunk = (id: string, chapter: string) => ({ chunkId: id, chapter, section: null, page: null });
    v.event(
      event('ToolResultRecorded', {
        toolUseId: 'x',
        content: '',
        isError: false,
        citationStart: 1,
        chunks: [chunk('a', 'Chapter 1'), chunk('b', 'Chapter 2')],
      }),
    );
    v.event({
      ...replied('See [2].'),
      data: { ...replied('').data, content: 'See [2].', citations: [chunk('b', 'Chapter 2')] },
    } as EventEnvelope);
    expect(out()).toBe('See [2].\nsources:\n  [2] Chapter 2\n');
  });
});
