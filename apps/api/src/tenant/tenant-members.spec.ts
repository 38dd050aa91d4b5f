import { TenantBudgets } from '@parley/read-models';
import { TenantMembers } from './tenant-members';

describe(TenantMembers.name, () => {
  const newSut = () => {
    const calls: string[] = [];
    const budgets = {
      noteReader: async (userId: string, tenant: string) => void calls.push(`${userId}@${tenant}`),
      forgetReader: async (userId: string) => void calls.push(`${userId}@none`),
    } as unknown as TenantBudgets;
    return { sut: new TenantMembers(budgets), calls };
  };

  it('writes a reader once for a few minutes, again at once when their tenant changes', async () => {
    const { sut, calls } = newSut();
    await sut.note({ id: 'ann', tenant: 'acme' }, 0);
    await sut.note({ id: 'ann', tenant: 'acme' }, 60_000);
    expect(calls).toEqual(['ann@acme']);
    await sut.note({ id: 'ann', tenant: 'globex' }, 61_000);
    await sut.note({ id: 'ann' }, 62_000);
    await sut.note({ id: 'ann' }, 62_000 + 5 * 60_000);
    expect(calls).toEqual(['ann@acme', 'ann@globex', 'ann@none', 'ann@none']);
  });

  it('lets the request go on when the write fails, and tries again on the next', async () => {
    const { sut, calls } = newSut();
    let fail = true;
    const budgets = (sut as unknown as { budgets: TenantBudgets }).budgets;
    const note = budgets.noteReader.bind(budgets);
    budgets.noteReader = async (userId, tenant) => {
      if (fail) throw new Error('connection refused');
      return note(userId, tenant);
    };
    await expect(sut.note({ id: 'bob', tenant: 'acme' }, 0)).resolves.toBeUndefined();
    fail = false;
    await sut.note({ id: 'bob', tenant: 'acme' }, 1);
    expect(calls).toEqual(['bob@acme']);
  });
});
