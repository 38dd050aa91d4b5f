import { Controller, Get, Param } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AuthUser } from '../auth/auth.guard';
import { CurrentUser } from '../auth/current-user.decorator';
import { ConversationReads } from '../conversations/conversation-reads.service';
import { Uuid } from '../http/uuid-param';
import { ApiIdParams } from '../openapi/api-id-params';
import { AUTH_PROBLEMS, ApiProblems } from '../openapi/api-problems';
import { UsageDto } from './usage.dto';

/**
 * One conversation's usage (the caller's over all of them is UsageController's).
 * Its operationId is the document's, kept from when one controller served every conversation route.
 */
@ApiTags('conversations')
@ApiBearerAuth()
@ApiProblems(AUTH_PROBLEMS)
@Controller('conversations')
export class ConversationUsageController {
  constructor(private readonly reads: ConversationReads) {}

  @Get(':id/usage')
  @ApiIdParams('id')
  @ApiOperation({
    operationId: 'ConversationsController_usageOf',
    summary: "The conversation's usage: turns, tool calls, failures, tokens, cache hit rate, cost by model",
  })
  @ApiOkResponse({ type: UsageDto })
  @ApiProblems('validation_failed', 'conversation_not_found')
  usageOf(@CurrentUser() user: AuthUser, @Param('id', Uuid('id')) id: string) {
    return this.reads.usage(user.id, id);
  }
}
