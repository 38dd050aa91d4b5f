import { formatUsd, readBudgetExceeded } from './index';

describe(readBudgetExceeded.name, () => {
  it('reads the fields of a budget_exceeded problem, and nothing from another answer', () => {
    const body = { code: 'budget_exceeded', budgetUsd: 5, spentUsd: 5.2, resetsAt: '2026-08-01T00:00:00.000Z' };
    expect(readBudgetExceeded(body)).toEqual({ budgetUsd: 5, spentUsd: 5.2, resetsAt: '2026-08-01T00:00:00.000Z' });
    expect(readBudgetExceeded({ code: 'rate_limited', retryAfter: 3 })).toBeUndefined();
    expect(readBudgetExceeded('budget_exceeded')).toBeUndefined();
    expect(readBudgetExceeded(undefined)).toBeUndefined();
  });
});

describe('formatUsd', () => {
  it('shows cents from a dollar, four decimals below, and 0 as $0', () => {
    expect(formatUsd(12.345)).toBe('$12.35');
    expect(formatUsd(0.01234)).toBe('$0.0123');
    expect(formatUsd(0)).toBe('$0');
  });
});
