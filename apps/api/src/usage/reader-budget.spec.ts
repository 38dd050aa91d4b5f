import { AppConfig } from '@parley/config';
import { monthOf } from '@parley/read-models';
import { AdminLimits } from '@parley/read-models';
import { TenantAdmin } from '../tenant/tenant-admin.service';
import { budgetDecision, ReaderBudget, standing } from './reader-budget';
import { UsageReport, UsageService } from './usage.service';

const at = (iso: string) => new Date(iso);

describe('reader budgets', () => {
  describe(monthOf.name, () => {
    it('is the calendar month in UTC, whatever the hour', () => {
      expect(monthOf(at('2026-03-15T12:00:00Z'))).toEqual({
        start: at('2026-03-01T00:00:00Z'),
        end: at('2026-04-01T00:00:00Z'),
      });
      expect(monthOf(at('2026-03-01T00:00:00Z')).start).toEqual(at('2026-03-01T00:00:00Z'));
      expect(monthOf(at('2026-03-31T23:59:59.999Z')).end).toEqual(at('2026-04-01T00:00:00Z'));
      // late on the 31st in New York is already April in UTC
      expect(monthOf(new Date('2026-03-31T21:00:00-04:00')).start).toEqual(at('2026-04-01T00:00:00Z'));
    });

    it('rolls December into the next year, and February ends on the 1st of March', () => {
      expect(monthOf(at('2026-12-31T23:00:00Z'))).toEqual({
        start: at('2026-12-01T00:00:00Z'),
        end: at('2027-01-01T00:00:00Z'),
      });
      expect(monthOf(at('2028-02-29T10:00:00Z')).end).toEqual(at('2028-03-01T00:00:00Z'));
    });
  });

  describe(budgetDecision.name, () => {
    const now = at('2026-06-30T23:00:00Z');

    it('allows every post without a budget, and below it', () => {
      expect(budgetDecision(null, 1_000, now)).toEqual({ allowed: true });
      expect(budgetDecision(1, 0.999999, now)).toEqual({ allowed: true });
    });

    it('refuses at the budget and over it, until the next month, in whole seconds', () => {
      const refused = { allowed: false, budgetUsd: 1, resetsAt: '2026-07-01T00:00:00.000Z', retryAfter: 3600 };
      expect(budgetDecision(1, 1, now)).toEqual({ ...refused, spentUsd: 1 });
      expect(budgetDecision(1, 1.2, now)).toEqual({ ...refused, spentUsd: 1.2 });
      expect(budgetDecision(1, 1, at('2026-06-30T23:59:59.500Z'))).toMatchObject({ retryAfter: 1 });
    });

    it('refuses everything with a budget of 0, even before any spend', () => {
      expect(budgetDecision(0, 0, now)).toMatchObject({ allowed: false, budgetUsd: 0, spentUsd: 0 });
    });
  });

  describe(standing.name, () => {
    const june = monthOf(at('2026-06-10T00:00:00Z'));

    it('shows what is left, never below 0, and the period', () => {
      expect(standing(0.3, 0.1, june)).toEqual({
        limitUsd: 0.3,
        spentUsd: 0.1,
        leftUsd: 0.2, // not 0.19999999999999998
        periodStart: '2026-06-01T00:00:00.000Z',
        resetsAt: '2026-07-01T00:00:00.000Z',
      });
      expect(standing(0.3, 0.5, june).leftUsd).toBe(0);
      expect(standing(null, 0.5, june)).toMatchObject({ limitUsd: null, leftUsd: null, spentUsd: 0.5 });
    });
  });

  describe(ReaderBudget.name, () => {
    const NO_ADMIN: AdminLimits = { tenant: null, tenantUsd: null, readerUsd: null };
    const newSut = (serverLimit: number | null, spentUsd: number, admin = NO_ADMIN, tenantSpentUsd = 0) => {
      const ofOwner = jest.fn(async () => ({ costUsd: spentUsd }) as UsageReport);
      // a UsageService whose ofOwner answers the spend (it reads nothing else)
      const usage: UsageService = Object.assign(Object.create(UsageService.prototype) as UsageService, { ofOwner });
      const tenants: TenantAdmin = Object.assign(Object.create(TenantAdmin.prototype) as TenantAdmin, {
        limitsOf: async () => admin,
        spentUsd: async () => tenantSpentUsd,
      });
      return { sut: new ReaderBudget(usage, tenants, { budgetUsdPerMonth: serverLimit } as AppConfig), ofOwner };
    };
    const now = at('2026-06-10T08:00:00Z');

    it("sums the owner's usage over the month, and the token's budget overrides the server's", async () => {
      const { sut, ofOwner } = newSut(1, 2);
      await expect(sut.assertWithin({ id: 'ann' }, now)).rejects.toMatchObject({
        code: 'budget_exceeded',
        extras: {
          budgetUsd: 1,
          spentUsd: 2,
          resetsAt: '2026-07-01T00:00:00.000Z',
          retryAfter: 20 * 86_400 + 16 * 3600,
        },
      });
      expect(ofOwner).toHaveBeenCalledWith('ann', { from: at('2026-06-01T00:00:00Z'), to: at('2026-07-01T00:00:00Z') });
      await expect(sut.assertWithin({ id: 'ann', budgetUsdPerMonth: 5 }, now)).resolves.toBeUndefined();
      await expect(sut.assertWithin({ id: 'ann', budgetUsdPerMonth: 0 }, now)).rejects.toMatchObject({
        code: 'budget_exceeded',
      });
    });

    it("holds the reader to the budget their tenant's admin set over the token's, and to the tenant's cap", async () => {
      const admin = { tenant: 'acme', tenantUsd: null, readerUsd: 1 };
      await expect(
        newSut(null, 2, admin).sut.assertWithin({ id: 'ann', budgetUsdPerMonth: 5 }, now),
      ).rejects.toMatchObject({ code: 'budget_exceeded', extras: { budgetUsd: 1, spentUsd: 2 } });
      const capped = { tenant: 'acme', tenantUsd: 3, readerUsd: null };
      await expect(newSut(null, 0, capped, 3).sut.assertWithin({ id: 'ann' }, now)).rejects.toMatchObject({
        code: 'budget_exceeded',
        extras: { budgetUsd: 3, spentUsd: 3, tenant: 'acme' },
      });
      await expect(newSut(null, 0, capped, 2.5).sut.assertWithin({ id: 'ann' }, now)).resolves.toBeUndefined();
      await expect(
        newSut(null, 2, admin).sut.standing({ id: 'ann', budgetUsdPerMonth: 5 }, now),
      ).resolves.toMatchObject({
        limitUsd: 1,
        leftUsd: 0,
      });
    });

    it('asks nothing of the usage read model when there is no budget', async () => {
      const { sut, ofOwner } = newSut(null, 2);
      await expect(sut.assertWithin({ id: 'ann' }, now)).resolves.toBeUndefined();
      expect(ofOwner).not.toHaveBeenCalled();
      await expect(sut.standing({ id: 'ann' }, now)).resolves.toMatchObject({ limitUsd: null, spentUsd: 2 });
    });
  });
});
