import { Controller, Get, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiExtraModels, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AuthUser } from '../auth/auth.guard';
import { CurrentUser } from '../auth/current-user.decorator';
import { invalid } from '../http/problem.exception';
import { AUTH_PROBLEMS, ApiProblems } from '../openapi/api-problems';
import { ModelUsageDto, ReaderUsageDto, UsageQueryDto } from './usage.dto';
import { ReaderBudget } from './reader-budget';
import { UsageService } from './usage.service';

@ApiTags('usage')
@ApiBearerAuth()
@ApiProblems(AUTH_PROBLEMS)
@ApiExtraModels(ModelUsageDto)
@Controller('usage')
export class UsageController {
  constructor(
    private readonly usage: UsageService,
    private readonly budget: ReaderBudget,
  ) {}

  @Get()
  @ApiOperation({
    summary: "The caller's usage over all their conversations, optionally within [from, to), and this month's budget",
  })
  @ApiOkResponse({ type: ReaderUsageDto })
  @ApiProblems('validation_failed')
  async ofCaller(@CurrentUser() user: AuthUser, @Query() q: UsageQueryDto) {
    const from = q.from ? new Date(q.from) : undefined;
    const to = q.to ? new Date(q.to) : undefined;
    if (from && to && from > to) throw invalid('from', 'from must not be after to');
    const [usage, budget] = await Promise.all([this.usage.ofOwner(user.id, { from, to }), this.budget.standing(user)]);
    return { ...usage, budget };
  }
}
