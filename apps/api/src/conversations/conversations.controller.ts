import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query, Req, Res } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiHeader,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiSecurity,
  ApiTags,
} from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { conversationStreamId } from '@parley/conversation';
import { Erasures } from '@parley/erasure';
import { EventStore } from '@parley/event-store';
import { ReadReplica } from '@parley/platform';
import { InvalidCursorError, ReadModelQueries } from '@parley/read-models';
import { AllowQueryToken, AuthUser } from '../auth/auth.guard';
import { CurrentUser } from '../auth/current-user.decorator';
import {
  CreateConversationDto,
  EventsQueryDto,
  ForkConversationDto,
  ListConversationsQueryDto,
  PageQueryDto,
  PostMessageDto,
  PostMessageQueryDto,
  ShowConversationQueryDto,
  StartBatchDto,
  StreamQueryDto,
  UpdateConversationDto,
} from './conversation.dto';
import { invalid } from '../http/problem.exception';
import { ConversationsService } from './conversations.service';
import { Uuid } from '../http/uuid-param';
import { ApiIdParams } from '../openapi/api-id-params';
import { AUTH_PROBLEMS, ApiProblems, BODY_PROBLEMS } from '../openapi/api-problems';
import { ApiEventStream } from '../openapi/api-event-stream';
import {
  BatchDto,
  BatchStartedDto,
  CancelResultDto,
  ConversationDto,
  ConversationListDto,
  EventPageDto,
  MessageListDto,
  PostedMessageDto,
} from './conversation-responses.dto';
import { toEnvelope } from './event-envelope';
import { EventStreamService } from './event-stream.service';
import { IdempotencyKey, IfMatch } from './if-match';
import { PostRateLimiter } from './post-rate-limiter';
import { TurnEnqueuer } from './turn-enqueuer';
import { UsageDto } from '../usage/usage.dto';
import { ReaderBudget } from '../usage/reader-budget';
import { UsageService } from '../usage/usage.service';

const IF_MATCH = ApiHeader({
  name: 'If-Match',
  required: false,
  description: 'the version you last saw, e.g. "7": 409 version_conflict when the conversation has moved on',
});

@ApiTags('conversations')
@ApiBearerAuth()
@ApiProblems(AUTH_PROBLEMS)
@Controller('conversations')
export class ConversationsController {
  constructor(
    private readonly conversations: ConversationsService,
    private readonly store: EventStore,
    private readonly streams: EventStreamService,
    private readonly rateLimiter: PostRateLimiter,
    private readonly enqueuer: TurnEnqueuer,
    private readonly queries: ReadModelQueries,
    private readonly reads: ReadReplica,
    private readonly usage: UsageService,
    private readonly erasures: Erasures,
    private readonly budget: ReaderBudget,
  ) {}

  @Post()
  @ApiOperation({ summary: 'Start a conversation (ConversationStarted)' })
  @ApiCreatedResponse({ type: ConversationDto })
  @ApiProblems(BODY_PROBLEMS, 'book_not_found', 'book_not_ready')
  create(@CurrentUser() user: AuthUser, @Body() body: CreateConversationDto) {
    return this.conversations.start(user.id, body);
  }

  @Get()
  @ApiOperation({ summary: 'List conversations, newest activity first' })
  @ApiOkResponse({ type: ConversationListDto })
  @ApiProblems('validation_failed')
  list(@CurrentUser() user: AuthUser, @Query() q: ListConversationsQueryDto) {
    return withCursor(() =>
      this.queries.listConversations(user.id, { bookId: q.bookId, limit: q.limit ?? 20, cursor: q.cursor }),
    );
  }

  @Get(':id')
  @ApiIdParams('id')
  @ApiOperation({ summary: 'Show a conversation; with ?version=N, its state folded from events 1..N' })
  @ApiOkResponse({ type: ConversationDto })
  @ApiProblems('validation_failed', 'conversation_not_found', 'version_not_found')
  show(@CurrentUser() user: AuthUser, @Param('id', Uuid('id')) id: string, @Query() q: ShowConversationQueryDto) {
    return this.conversations.view(user.id, id, q.version);
  }

  @Patch(':id')
  @ApiIdParams('id')
  @ApiOperation({
    summary:
      'Rename, move the reading position and/or change the policy (ConversationRenamed, ReadingPositionChanged, PolicyChanged)',
  })
  @IF_MATCH
  @ApiOkResponse({ type: ConversationDto })
  @ApiProblems(BODY_PROBLEMS, 'conversation_not_found', 'version_conflict')
  update(
    @CurrentUser() user: AuthUser,
    @Param('id', Uuid('id')) id: string,
    @Body() body: UpdateConversationDto,
    @IfMatch() ifMatch?: number,
  ) {
    return this.conversations.update(user.id, id, body, ifMatch);
  }

  @Post(':id/batches')
  @ApiIdParams('id')
  @HttpCode(202)
  @ApiOperation({
    summary: 'Answer several prompts as one batch (BatchStarted, then BatchCompleted)',
    description:
      "sequential: the prompts become the conversation's next turns, in order. independent: each prompt is posted to a " +
      'fork of the conversation at its current version (the item names it), answered concurrently. Follow the ' +
      'batch with GET …/batches/{batchId}, or BatchCompleted on the stream.',
  })
  @ApiAcceptedResponse({ type: BatchStartedDto })
  @ApiProblems(BODY_PROBLEMS, 'conversation_not_found', 'rate_limited', 'budget_exceeded')
  async startBatch(@CurrentUser() user: AuthUser, @Param('id', Uuid('id')) id: string, @Body() body: StartBatchDto) {
    await this.budget.assertWithin(user); // before the rate limiter: a refused batch uses none of its posts
    await this.rateLimiter.consume(user.id, body.prompts.length); // each prompt is a post
    const { batchId, turns } = await this.conversations.startBatch(user.id, id, body);
    for (const t of turns) await this.enqueuer.turnPosted(t.conversationId, t.turnId);
    return { batchId };
  }

  @Get(':id/batches/:batchId')
  @ApiIdParams('id', 'batchId')
  @ApiOperation({ summary: "A batch: each prompt's answer, citations, usage and latency, and the batch's figures" })
  @ApiOkResponse({ type: BatchDto })
  @ApiProblems('validation_failed', 'conversation_not_found', 'batch_not_found')
  showBatch(
    @CurrentUser() user: AuthUser,
    @Param('id', Uuid('id')) id: string,
    @Param('batchId', Uuid('batchId')) batchId: string,
  ) {
    return this.conversations.batch(user.id, id, batchId);
  }

  @Get(':id/usage')
  @ApiIdParams('id')
  @ApiOperation({
    summary: "The conversation's usage: turns, tool calls, failures, tokens, cache hit rate, cost by model",
  })
  @ApiOkResponse({ type: UsageDto })
  @ApiProblems('validation_failed', 'conversation_not_found')
  async usageOf(@CurrentUser() user: AuthUser, @Param('id', Uuid('id')) id: string) {
    await this.conversations.view(user.id, id); // 404 for a conversation that is not the caller's, or deleted
    return this.usage.ofConversation(user.id, id);
  }

  @Delete(':id')
  @ApiIdParams('id')
  @HttpCode(204)
  @ApiOperation({
    summary: 'Erase the conversation (ConversationErased); every later call answers 404',
    description:
      'Its events, read models, snapshots and Redis jobs are removed (docs/erasure.md); its spending stays in the usage ledger. Forks are separate conversations and are kept.',
  })
  @IF_MATCH
  @ApiNoContentResponse({ description: 'deleted' })
  @ApiProblems('validation_failed', 'conversation_not_found', 'version_conflict')
  async remove(@CurrentUser() user: AuthUser, @Param('id', Uuid('id')) id: string, @IfMatch() ifMatch?: number) {
    await this.enqueuer.conversationErased(await this.erasures.conversation(user.id, id, ifMatch));
  }

  @Post(':id/messages')
  @ApiIdParams('id')
  @HttpCode(202)
  @ApiOperation({
    summary: 'Post a message (UserMessagePosted); an agent turn answers it',
    description:
      'Follow the turn on GET /conversations/{id}/stream. While a turn runs, the message is queued (multitask=enqueue), ' +
      'refused with 409 turn_in_progress (reject), or the running turn is cancelled first (interrupt). A reader who has ' +
      "spent this month's budget gets 402 budget_exceeded and nothing is recorded.",
  })
  @IF_MATCH
  @ApiHeader({
    name: 'Idempotency-Key',
    required: false,
    description: 'a retry with the same key and body gets the first answer and appends nothing; another body is 422',
  })
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
  async post(
    @CurrentUser() user: AuthUser,
    @Param('id', Uuid('id')) id: string,
    @Body() body: PostMessageDto,
    @Query() q: PostMessageQueryDto,
    @IdempotencyKey() key?: string,
    @IfMatch() expected?: number,
  ) {
    const input = { content: body.content, selectedText: body.selectedText, multitask: q.multitask ?? 'enqueue' };
    // a retry of a post already made is no new post: it gets its first answer, even at the rate
    // limit or over budget (its turn may be what spent the budget)
    const earlier = key ? await this.conversations.earlierPost(user.id, id, key, input) : undefined;
    if (!earlier) {
      await this.budget.assertWithin(user);
      await this.rateLimiter.consume(user.id);
    }
    const result =
      earlier ?? (await this.conversations.post(user.id, id, input, { idempotencyKey: key, ifMatch: expected }));
    const { interrupted = [], ...answer } = result;
    for (const turnId of interrupted) await this.enqueuer.turnCancelled(id, turnId);
    await this.enqueuer.turnPosted(id, result.turnId);
    return answer;
  }

  @Get(':id/messages')
  @ApiIdParams('id')
  @ApiOperation({ summary: 'Messages (user, assistant, tool_result), oldest first, paged' })
  @ApiOkResponse({ type: MessageListDto })
  @ApiProblems('validation_failed', 'conversation_not_found')
  async messages(@CurrentUser() user: AuthUser, @Param('id', Uuid('id')) id: string, @Query() q: PageQueryDto) {
    await this.conversations.view(user.id, id);
    return withCursor(() => this.queries.listMessages(id, { limit: q.limit ?? 100, cursor: q.cursor }));
  }

  @Get(':id/events')
  @ApiIdParams('id')
  @ApiOperation({ summary: 'The stream as JSON: events with version > after' })
  @ApiOkResponse({ type: EventPageDto })
  @ApiProblems('validation_failed', 'conversation_not_found')
  async events(@CurrentUser() user: AuthUser, @Param('id', Uuid('id')) id: string, @Query() q: EventsQueryDto) {
    await this.conversations.view(user.id, id);
    const limit = q.limit ?? 1000;
    // the replica serves the page once it has replayed every write committed before this request
    const events = await this.store.readStream(
      conversationStreamId(id),
      { after: q.after ?? 0, limit: limit + 1 },
      await this.reads.currentPool(),
    );
    const page = events.slice(0, limit);
    return {
      items: page.map(toEnvelope),
      nextCursor: events.length > limit ? String(page[page.length - 1].version) : null,
    };
  }

  @Get(':id/stream')
  @ApiIdParams('id')
  @AllowQueryToken()
  @ApiSecurity('access_token')
  @ApiOperation({
    summary:
      'SSE: stored events after Last-Event-ID (or ?after=), then live ones; AssistantTextDelta frames carry no id',
  })
  @ApiHeader({
    name: 'Last-Event-ID',
    required: false,
    description: 'the last version received; the stream resumes after it (wins over ?after=)',
  })
  @ApiEventStream(
    'One frame per stored event: `id:` its version, `event:` its type, `data:` its envelope (ConversationEventEnvelope). ' +
      'Between them, `event: AssistantTextDelta` frames without id carry `{turnId, iteration, text}` as the reply streams.',
  )
  @ApiProblems('validation_failed', 'conversation_not_found')
  async stream(
    @CurrentUser() user: AuthUser,
    @Param('id', Uuid('id')) id: string,
    @Query() q: StreamQueryDto,
    @Req() req: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const lastEventId = req.headers['last-event-id'];
    let after = q.after ?? 0;
    if (lastEventId !== undefined) {
      const n = Number(lastEventId);
      if (typeof lastEventId !== 'string' || !/^\d{1,10}$/.test(lastEventId) || n > 2 ** 31 - 1) {
        throw invalid('Last-Event-ID', 'Last-Event-ID must be a stream version');
      }
      after = n;
    }
    await this.conversations.view(user.id, id);
    reply.hijack(); // the stream writes to the raw response itself
    await this.streams.serve(id, after, req.raw, reply.raw);
  }

  @Post(':id/turns/:turnId/cancel')
  @ApiIdParams('id', 'turnId')
  @HttpCode(202)
  @ApiOperation({ summary: 'Cancel a turn (TurnCancelled); a finished turn is left as it is' })
  @ApiAcceptedResponse({ type: CancelResultDto })
  @ApiProblems('validation_failed', 'conversation_not_found', 'turn_not_found')
  async cancel(
    @CurrentUser() user: AuthUser,
    @Param('id', Uuid('id')) id: string,
    @Param('turnId', Uuid('turnId')) turnId: string,
  ) {
    const appended = await this.conversations.cancelTurn(user.id, id, turnId);
    if (appended.length > 0) await this.enqueuer.turnCancelled(id, turnId);
    return { turnId, cancelled: appended.length > 0 };
  }

  @Post(':id/fork')
  @ApiIdParams('id')
  @ApiOperation({ summary: 'Fork: a new conversation whose history is events 1..version' })
  @ApiCreatedResponse({ type: ConversationDto })
  @ApiProblems(BODY_PROBLEMS, 'conversation_not_found')
  fork(@CurrentUser() user: AuthUser, @Param('id', Uuid('id')) id: string, @Body() body: ForkConversationDto) {
    return this.conversations.fork(user.id, id, body.version);
  }
}

async function withCursor<T>(query: () => Promise<T>): Promise<T> {
  try {
    return await query();
  } catch (e) {
    if (e instanceof InvalidCursorError) {
      throw invalid('cursor', 'cursor is not valid: pass the nextCursor of a previous page unchanged');
    }
    throw e;
  }
}
