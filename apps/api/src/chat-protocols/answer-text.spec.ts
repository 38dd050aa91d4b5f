import { AnswerText } from './answer-text';

const T = 'turn-1';

/** What the sink saw, as the client's text blocks (id → text), in order of opening. */
function recorder() {
  const ops: string[] = [];
  const blocks = new Map<string, string>();
  return {
    ops,
    blocks,
    sink: {
      textStart: (id: string) => (ops.push(`start ${id}`), blocks.set(id, '')),
      textDelta: (id: string, d: string) => (ops.push(`delta ${id}`), blocks.set(id, blocks.get(id)! + d)),
      textEnd: (id: string) => void ops.push(`end ${id}`),
    },
  };
}
const delta = (index: number, text: string, iteration = 1, attempt = 1) => ({
  turnId: T,
  iteration,
  attempt,
  index,
  text,
});

describe(AnswerText.name, () => {
  it('streams a call’s deltas as one block and completes it with the recorded answer', () => {
    const r = recorder();
    const sut = new AnswerText(T, r.sink);
    sut.delta(delta(0, 'The book '));
    sut.delta(delta(1, 'says'));
    sut.answer('The book says so.', 1);
    expect([...r.blocks.values()]).toEqual(['The book says so.']);
    expect(r.ops.at(-1)).toBe(`end ${T}:1:1`);
  });

  it('holds back a block joined mid-way and sends the answer whole', () => {
    const r = recorder();
    const sut = new AnswerText(T, r.sink);
    sut.delta(delta(3, 'says'));
    sut.delta(delta(4, ' so'));
    expect(r.ops).toEqual([]);
    sut.answer('The book says so.', 1);
    expect([...r.blocks.values()]).toEqual(['The book says so.']);
  });

  it('stops streaming at a lost delta and completes from the log', () => {
    const r = recorder();
    const sut = new AnswerText(T, r.sink);
    sut.delta(delta(0, 'The '));
    sut.delta(delta(2, 'says'));
    sut.answer('The book says so.', 1);
    expect([...r.blocks.values()]).toEqual(['The book says so.']);
  });

  it('closes a call’s text at its tool call, ignores its late deltas, and streams the next call', () => {
    const r = recorder();
    const sut = new AnswerText(T, r.sink);
    sut.delta(delta(0, 'Let me look'));
    sut.callText(1, 'Let me look.');
    sut.delta(delta(1, '.'));
    sut.delta(delta(0, 'Found it.', 2));
    sut.answer('Found it.', 2);
    expect([...r.blocks.entries()]).toEqual([
      [`${T}:1:1`, 'Let me look.'],
      [`${T}:2:1`, 'Found it.'],
    ]);
  });

  it('sends a call’s recorded text whole when none of it streamed, and nothing after the answer', () => {
    const r = recorder();
    const sut = new AnswerText(T, r.sink);
    sut.callText(1, 'Searching.');
    sut.answer('Done.', 2);
    sut.delta(delta(0, 'late', 2));
    expect([...r.blocks.values()]).toEqual(['Searching.', 'Done.']);
    expect(r.ops.filter((o) => o.startsWith('start')).length).toBe(r.ops.filter((o) => o.startsWith('end')).length);
  });
});
