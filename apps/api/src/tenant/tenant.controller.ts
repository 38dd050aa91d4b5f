import { Body, Controller, Get, Headers, Param, Put, Query, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { AuthUser } from '../auth/auth.guard';
import { CurrentUser } from '../auth/current-user.decorator';
import { invalid } from '../http/problem.exception';
import { AUTH_PROBLEMS, ApiProblems } from '../openapi/api-problems';
import { TenantAdmin } from './tenant-admin.service';
import { AdminBudgetDto, ReaderAdminBudgetDto, SetBudgetDto, TenantUsageDto, TenantUsageQueryDto } from './tenant.dto';
import { usageCsv } from './usage-csv';

/**
 * A tenant's administration by its admin (`parley_roles: ["admin"]`, their `parley_tenant`): its
 * readers' usage, the tenant's monthly cap and each reader's budget. Every other caller gets 403.
 */
@ApiTags('tenant')
@ApiBearerAuth()
@ApiProblems(AUTH_PROBLEMS, 'forbidden')
@Controller('tenant')
export class TenantController {
  constructor(private readonly admin: TenantAdmin) {}

  @Get('usage')
  @ApiOperation({
    summary: "The tenant's usage within [from, to), by reader, model or day: JSON, or CSV with Accept: text/csv",
  })
  @ApiProduces('application/json', 'text/csv')
  @ApiOkResponse({ type: TenantUsageDto })
  @ApiProblems('validation_failed')
  async usage(
    @CurrentUser() user: AuthUser,
    @Query() q: TenantUsageQueryDto,
    @Headers('accept') accept: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const tenant = this.admin.tenantOf(user);
    const from = q.from ? new Date(q.from) : undefined;
    const to = q.to ? new Date(q.to) : undefined;
    if (from && to && from > to) throw invalid('from', 'from must not be after to');
    const report = await this.admin.usage(tenant, { from, to }, q.groupBy ?? 'reader');
    reply.header('vary', 'Accept');
    if (!accept?.includes('text/csv')) return report;
    reply.header('content-type', 'text/csv; charset=utf-8');
    return usageCsv(report.groupBy, report.groups);
  }

  @Get('budget')
  @ApiOperation({ summary: "The tenant's monthly cap on all its readers together, and this month's spend" })
  @ApiOkResponse({ type: AdminBudgetDto })
  budget(@CurrentUser() user: AuthUser) {
    return this.admin.tenantBudget(this.admin.tenantOf(user));
  }

  @Put('budget')
  @ApiOperation({ summary: "Sets (or, with null, lifts) the tenant's monthly cap on all its readers together" })
  @ApiOkResponse({ type: AdminBudgetDto })
  @ApiProblems('validation_failed')
  setBudget(@CurrentUser() user: AuthUser, @Body() body: SetBudgetDto) {
    return this.admin.setTenantBudget(user, this.admin.tenantOf(user), body.monthlyUsd);
  }

  @Get('readers/:userId/budget')
  @ApiOperation({ summary: "A reader's monthly budget as the admin set it, and their spend this month" })
  @ApiOkResponse({ type: ReaderAdminBudgetDto })
  @ApiProblems('reader_not_found')
  readerBudget(@CurrentUser() user: AuthUser, @Param('userId') userId: string) {
    return this.admin.readerBudget(this.admin.tenantOf(user), userId);
  }

  @Put('readers/:userId/budget')
  @ApiOperation({
    summary:
      "Sets (or, with null, lifts) a reader's monthly budget; it holds over their token's while they are in the tenant",
  })
  @ApiOkResponse({ type: ReaderAdminBudgetDto })
  @ApiProblems('validation_failed', 'reader_not_found')
  setReaderBudget(@CurrentUser() user: AuthUser, @Param('userId') userId: string, @Body() body: SetBudgetDto) {
    return this.admin.setReaderBudget(user, this.admin.tenantOf(user), userId, body.monthlyUsd);
  }
}
