import { Module } from '@nestjs/common';
import { ReadModelsModule, TenantBudgets, TenantLedger } from '@parley/read-models';
import { Pool } from 'pg';
import { TenantAdmin } from './tenant-admin.service';
import { TenantController } from './tenant.controller';
import { TenantMembers } from './tenant-members';

/** Tenant administration: which readers are in which tenant, its usage, and the budgets its admin sets. */
@Module({
  imports: [ReadModelsModule],
  controllers: [TenantController],
  providers: [
    { provide: TenantBudgets, inject: [Pool], useFactory: (pool: Pool) => new TenantBudgets(pool) },
    { provide: TenantLedger, inject: [Pool], useFactory: (pool: Pool) => new TenantLedger(pool) },
    TenantAdmin,
    TenantMembers,
  ],
  exports: [TenantAdmin, TenantMembers],
})
export class TenantModule {}
