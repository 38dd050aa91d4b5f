import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiAcceptedResponse, ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AuthUser } from '../auth/auth.guard';
import { CurrentUser } from '../auth/current-user.decorator';
import { Uuid } from '../http/uuid-param';
import { ApiIdParams } from '../openapi/api-id-params';
import { AUTH_PROBLEMS, ApiProblems, BODY_PROBLEMS } from '../openapi/api-problems';
import { PageQueryDto, PostMessageDto, PostMessageQueryDto, ToolApprovalDto } from './conversation.dto';
import { CancelResultDto, MessageListDto, PostedMessageDto, ToolApprovalResultDto } from './conversation-responses.dto';
import { ConversationReads } from './conversation-reads.service';
import { ApiIdempotencyKey, IdempotencyKey } from './idempotency-key';
import { ApiIfMatch, IfMatch } from './if-match';
import { MessagePosting } from './message-posting.service';
import { ToolApprovals } from './tool-approvals';
import { TurnCancelling } from './turn-cancelling';

/**
 * A conversation's messages: post one (an agent turn answers it), list them, cancel a turn.
 * The operationIds are the document's, kept from when one controller served every conversation route.
 */
@ApiTags('conversations')
@ApiBearerAuth()
@ApiProblems(AUTH_PROBLEMS)
@Controller('conversations')
export class MessagesController {
  constructor(
    private readonly posting: MessagePosting,
    private readonly cancelling: TurnCancelling,
    private readonly reads: ConversationReads,
    private readonly approvals: ToolApprovals,
  ) {}

  @Post(':id/messages')
  @ApiIdParams('id')
  @HttpCode(202)
  @ApiOperation({
    operationId: 'ConversationsController_post',
    summary: 'Post a message (UserMessagePosted); an agent turn answers it',
    description:
      'Follow the turn on GET /conversations/{id}/stream. While a turn runs, the message is queued (multitask=enqueue), ' +
      'refused with 409 turn_in_progress (reject), or the running turn is cancelled first (interrupt). A reader who has ' +
      "spent this month's budget gets 402 budget_exceeded and nothing is recorded.",
  })
  @ApiIfMatch()
  @ApiIdempotencyKey()
  @ApiAcceptedResponse({ type: PostedMessageDto })
  @ApiProblems(
    BODY_PROBLEMS,
    'conversation_not_found',
    'version_conflict',
    'turn_in_progress',
    'idempotency_key_reused',
    'rate_limited',
    'budget_exceeded',
  )
  post(
    @CurrentUser() user: AuthUser,
    @Param('id', Uuid('id')) id: string,
    @Body() body: PostMessageDto,
    @Query() q: PostMessageQueryDto,
    @IdempotencyKey() key?: string,
    @IfMatch() expected?: number,
  ) {
    return this.posting.post(
      user,
      id,
      { content: body.content, selectedText: body.selectedText, multitask: q.multitask ?? 'enqueue' },
      { idempotencyKey: key, ifMatch: expected },
    );
  }

  @Get(':id/messages')
  @ApiIdParams('id')
  @ApiOperation({
    operationId: 'ConversationsController_messages',
    summary: 'Messages (user, assistant, tool_result), oldest first, paged',
  })
  @ApiOkResponse({ type: MessageListDto })
  @ApiProblems('validation_failed', 'conversation_not_found')
  messages(@CurrentUser() user: AuthUser, @Param('id', Uuid('id')) id: string, @Query() q: PageQueryDto) {
    return this.reads.messages(user.id, id, q);
  }

  @Post(':id/turns/:turnId/cancel')
  @ApiIdParams('id', 'turnId')
  @HttpCode(202)
  @ApiOperation({
    operationId: 'ConversationsController_cancel',
    summary: 'Cancel a turn (TurnCancelled); a finished turn is left as it is',
  })
  @ApiAcceptedResponse({ type: CancelResultDto })
  @ApiProblems('validation_failed', 'conversation_not_found', 'turn_not_found')
  cancel(
    @CurrentUser() user: AuthUser,
    @Param('id', Uuid('id')) id: string,
    @Param('turnId', Uuid('turnId')) turnId: string,
  ) {
    return this.cancelling.cancel(user.id, id, turnId);
  }

  @Post(':id/turns/:turnId/approvals')
  @ApiIdParams('id', 'turnId')
  @HttpCode(202)
  @ApiOperation({
    operationId: 'ConversationsController_approve',
    summary: "Answer a tool call that waits for the reader's approval (ToolApprovalDecided)",
    description:
      'The turn goes on from the log: an approved call is made, a declined one is recorded as declined for the model ' +
      'to read. A call answered before (or denied on expiry, APPROVAL_TIMEOUT_MS), or of a turn that has ended, is ' +
      '409 approval_decided; a call the turn did not ask about is 404 approval_not_found.',
  })
  @ApiAcceptedResponse({ type: ToolApprovalResultDto })
  @ApiProblems(...BODY_PROBLEMS, 'conversation_not_found', 'approval_not_found', 'approval_decided')
  approve(
    @CurrentUser() user: AuthUser,
    @Param('id', Uuid('id')) id: string,
    @Param('turnId', Uuid('turnId')) turnId: string,
    @Body() body: ToolApprovalDto,
  ) {
    return this.approvals.decide(user.id, id, turnId, body);
  }
}
