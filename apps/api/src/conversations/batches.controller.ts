import { Body, Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiAcceptedResponse, ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AuthUser } from '../auth/auth.guard';
import { CurrentUser } from '../auth/current-user.decorator';
import { Uuid } from '../http/uuid-param';
import { ApiIdParams } from '../openapi/api-id-params';
import { AUTH_PROBLEMS, ApiProblems, BODY_PROBLEMS } from '../openapi/api-problems';
import { BatchStarting } from './batch-starting.service';
import { StartBatchDto } from './conversation.dto';
import { BatchDto, BatchStartedDto } from './conversation-responses.dto';
import { ConversationReads } from './conversation-reads.service';

/**
 * Batches of prompts on a conversation: start one, show how it stands.
 * The operationIds are the document's, kept from when one controller served every conversation route.
 */
@ApiTags('conversations')
@ApiBearerAuth()
@ApiProblems(AUTH_PROBLEMS)
@Controller('conversations')
export class BatchesController {
  constructor(
    private readonly starting: BatchStarting,
    private readonly reads: ConversationReads,
  ) {}

  @Post(':id/batches')
  @ApiIdParams('id')
  @HttpCode(202)
  @ApiOperation({
    operationId: 'ConversationsController_startBatch',
    summary: 'Answer several prompts as one batch (BatchStarted, then BatchCompleted)',
    description:
      "sequential: the prompts become the conversation's next turns, in order. independent: each prompt is posted to a " +
      'fork of the conversation at its current version (the item names it), answered concurrently. Follow the ' +
      'batch with GET …/batches/{batchId}, or BatchCompleted on the stream.',
  })
  @ApiAcceptedResponse({ type: BatchStartedDto })
  @ApiProblems(BODY_PROBLEMS, 'conversation_not_found', 'rate_limited', 'budget_exceeded')
  startBatch(@CurrentUser() user: AuthUser, @Param('id', Uuid('id')) id: string, @Body() body: StartBatchDto) {
    return this.starting.start(user, id, body);
  }

  @Get(':id/batches/:batchId')
  @ApiIdParams('id', 'batchId')
  @ApiOperation({
    operationId: 'ConversationsController_showBatch',
    summary: "A batch: each prompt's answer, citations, usage and latency, and the batch's figures",
  })
  @ApiOkResponse({ type: BatchDto })
  @ApiProblems('validation_failed', 'conversation_not_found', 'batch_not_found')
  showBatch(
    @CurrentUser() user: AuthUser,
    @Param('id', Uuid('id')) id: string,
    @Param('batchId', Uuid('batchId')) batchId: string,
  ) {
    return this.reads.batch(user.id, id, batchId);
  }
}
