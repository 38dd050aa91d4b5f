import { QUEUED_TURN_RECHECK_MAX_MS, QUEUED_TURN_RECHECK_MS, queuedTurnRecheckMs } from './turn-jobs';

describe('queuedTurnRecheckMs', () => {
  it('doubles with each open turn ahead, from the base for the next in line, up to the cap', () => {
    expect(queuedTurnRecheckMs(1)).toBe(QUEUED_TURN_RECHECK_MS);
    expect(queuedTurnRecheckMs(2)).toBe(2 * QUEUED_TURN_RECHECK_MS);
    expect(queuedTurnRecheckMs(3)).toBe(4 * QUEUED_TURN_RECHECK_MS);
    expect(queuedTurnRecheckMs(50)).toBe(QUEUED_TURN_RECHECK_MAX_MS);
    expect(queuedTurnRecheckMs(0)).toBe(QUEUED_TURN_RECHECK_MS);
  });
});
