import { AssistantTextDelta } from '@parley/conversation';
import { LiveDeltas } from '@parley/agent';
import { DELTA_BATCH_MS, DeltaBatcher } from '../../apps/worker/src/turns/delta-batcher';

/** What the batcher hands to Redis, recorded (the Redis path itself runs in the e2e suites). */
function recordingDeltas() {
  const sent: AssistantTextDelta[] = [];
  const deltas = { publish: async (_id: string, d: AssistantTextDelta) => void sent.push(d) } as unknown as LiveDeltas;
  return { sent, deltas };
}

describe(DeltaBatcher.name, () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('sends the text that comes within one batch window as one delta, with consecutive indexes', () => {
    const { sent, deltas } = recordingDeltas();
    const sut = new DeltaBatcher(deltas, 'c1', 't1', 2);
    for (const word of ['The ', 'storm ', 'broke']) sut.add(word, 1);
    expect(sent).toEqual([]);
    jest.advanceTimersByTime(DELTA_BATCH_MS);
    sut.add(' at dusk.', 1);
    sut.flush(); // the call ended
    expect(sent).toEqual([
      { turnId: 't1', iteration: 2, attempt: 1, index: 0, text: 'The storm broke' },
      { turnId: 't1', iteration: 2, attempt: 1, index: 1, text: ' at dusk.' },
    ]);
  });

  it('sends what an attempt left before the next attempt starts, whose indexes start again from 0', () => {
    const { sent, deltas } = recordingDeltas();
    const sut = new DeltaBatcher(deltas, 'c1', 't1', 1);
    sut.add('Half an ans', 1);
    sut.add('A whole', 2);
    sut.add(' answer.', 2);
    sut.flush();
    expect(sent.map((d) => [d.attempt, d.index, d.text])).toEqual([
      [1, 0, 'Half an ans'],
      [2, 0, 'A whole answer.'],
    ]);
  });

  it('sends nothing for a call that streamed no text', () => {
    const { sent, deltas } = recordingDeltas();
    new DeltaBatcher(deltas, 'c1', 't1', 1).flush();
    expect(sent).toEqual([]);
  });

  it('drops the text still waiting when the answer that carries it is about to be appended', () => {
    const { sent, deltas } = recordingDeltas();
    const sut = new DeltaBatcher(deltas, 'c1', 't1', 1);
    sut.add('The storm ', 1);
    jest.advanceTimersByTime(DELTA_BATCH_MS);
    sut.add('broke.', 1);
    sut.discard();
    jest.advanceTimersByTime(DELTA_BATCH_MS); // and its timer sends nothing later
    expect(sent.map((d) => d.text)).toEqual(['The storm ']);
  });
});
