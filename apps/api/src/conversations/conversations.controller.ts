import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { AuthUser } from '../auth/auth.guard';
import { CurrentUser } from '../auth/current-user.decorator';
import { Uuid } from '../http/uuid-param';
import { ApiIdParams } from '../openapi/api-id-params';
import { AUTH_PROBLEMS, ApiProblems, BODY_PROBLEMS } from '../openapi/api-problems';
import {
  CreateConversationDto,
  ForkConversationDto,
  ListConversationsQueryDto,
  ShowConversationQueryDto,
  UpdateConversationDto,
} from './conversation.dto';
import { ConversationDto, ConversationListDto } from './conversation-responses.dto';
import { ConversationReads } from './conversation-reads.service';
import { ConversationForking } from './conversation-forking';
import { ConversationStarting } from './conversation-starting';
import { ConversationUpdating } from './conversation-updating';
import { ErasureRequests } from './erasure-requests.service';
import { ApiIfMatch, IfMatch } from './if-match';

/** The conversation itself: start one, list them, show, change, erase and fork one. */
@ApiTags('conversations')
@ApiBearerAuth()
@ApiProblems(AUTH_PROBLEMS)
@Controller('conversations')
export class ConversationsController {
  constructor(
    private readonly starting: ConversationStarting,
    private readonly updating: ConversationUpdating,
    private readonly forking: ConversationForking,
    private readonly reads: ConversationReads,
    private readonly erasure: ErasureRequests,
  ) {}

  @Post()
  @ApiOperation({ summary: 'Start a conversation (ConversationStarted)' })
  @ApiCreatedResponse({ type: ConversationDto })
  @ApiProblems(BODY_PROBLEMS, 'book_not_found', 'book_not_ready', 'rate_limited')
  create(@CurrentUser() user: AuthUser, @Body() body: CreateConversationDto) {
    return this.starting.start(user.id, body, user.tenant);
  }

  @Get()
  @ApiOperation({ summary: 'List conversations, newest activity first' })
  @ApiOkResponse({ type: ConversationListDto })
  @ApiProblems('validation_failed')
  list(@CurrentUser() user: AuthUser, @Query() q: ListConversationsQueryDto) {
    return this.reads.list(user.id, q);
  }

  @Get(':id')
  @ApiIdParams('id')
  @ApiOperation({ summary: 'Show a conversation; with ?version=N, its state folded from events 1..N' })
  @ApiOkResponse({ type: ConversationDto })
  @ApiProblems('validation_failed', 'conversation_not_found', 'version_not_found')
  show(@CurrentUser() user: AuthUser, @Param('id', Uuid('id')) id: string, @Query() q: ShowConversationQueryDto) {
    return this.reads.view(user.id, id, q.version);
  }

  @Patch(':id')
  @ApiIdParams('id')
  @ApiOperation({
    summary:
      'Rename, move the reading position and/or change the policy (ConversationRenamed, ReadingPositionChanged, PolicyChanged)',
  })
  @ApiIfMatch()
  @ApiOkResponse({ type: ConversationDto })
  @ApiProblems(
    BODY_PROBLEMS,
    'model_not_allowed',
    'conversation_not_found',
    'book_not_found',
    'book_not_ready',
    'version_conflict',
  )
  update(
    @CurrentUser() user: AuthUser,
    @Param('id', Uuid('id')) id: string,
    @Body() body: UpdateConversationDto,
    @IfMatch() ifMatch?: number,
  ) {
    return this.updating.update(user.id, id, body, ifMatch, user.tenant);
  }

  @Delete(':id')
  @ApiIdParams('id')
  @HttpCode(204)
  @ApiOperation({
    summary: 'Erase the conversation (ConversationErased); every later call answers 404',
    description:
      'Its events, read models, snapshots and Redis jobs are removed (docs/erasure.md); its spending stays in the usage ledger. Forks are separate conversations and are kept.',
  })
  @ApiIfMatch()
  @ApiNoContentResponse({ description: 'deleted' })
  @ApiProblems('validation_failed', 'conversation_not_found', 'version_conflict')
  async remove(@CurrentUser() user: AuthUser, @Param('id', Uuid('id')) id: string, @IfMatch() ifMatch?: number) {
    await this.erasure.conversation(user.id, id, ifMatch);
  }

  @Post(':id/fork')
  @ApiIdParams('id')
  @ApiOperation({
    summary: 'Fork: a new conversation whose history is events 1..version',
    description:
      'Counted against RATE_LIMIT_FORKS_PER_MIN: 1, and 1 more per 100 events copied (at most the whole minute).',
  })
  @ApiCreatedResponse({ type: ConversationDto })
  @ApiProblems(BODY_PROBLEMS, 'conversation_not_found', 'rate_limited')
  async fork(@CurrentUser() user: AuthUser, @Param('id', Uuid('id')) id: string, @Body() body: ForkConversationDto) {
    return this.reads.view(user.id, await this.forking.fork(user, id, body.version));
  }
}
