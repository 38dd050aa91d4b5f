import { Module } from '@nestjs/common';
import { ReadModelsModule } from '@parley/read-models';
import { TenantAdmin } from './tenant-admin.service';
import { TenantController } from './tenant.controller';
import { TenantMembers } from './tenant-members';

/** Tenant administration: which readers are in which tenant, its usage, and the budgets its admin sets. */
@Module({
  imports: [ReadModelsModule],
  controllers: [TenantController],
  providers: [TenantAdmin, TenantMembers],
  exports: [TenantAdmin, TenantMembers],
})
export class TenantModule {}
