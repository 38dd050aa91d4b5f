import {
  BadRequestException,
  Body,
  Controller,
  Delete,
  Get,
  Headers,
  HttpCode,
  Param,
  ParseUUIDPipe,
  Patch,
  Post,
  Query,
  Req,
  Res,
} from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import { Request, Response } from 'express';
import { conversationStreamId } from '@parley/conversation';
import { EventStore } from '@parley/event-store';
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
  StreamQueryDto,
  UpdateConversationDto,
} from './conversation.dto';
import { ConversationsService } from './conversations.service';
import { EventEnvelopeDto } from './event-envelope.dto';
import { toEnvelope } from './event-envelope';
import { EventStreamService } from './event-stream.service';
import { parseIdempotencyKey, parseIfMatch } from './if-match';
import { PostRateLimiter } from './post-rate-limiter';
import { TurnEnqueuer } from './turn-enqueuer';

const Id = () =>
  new ParseUUIDPipe({ version: undefined, exceptionFactory: () => new BadRequestException(['id must be a UUID']) });

@ApiTags('conversations')
@ApiBearerAuth()
@Controller('conversations')
export class ConversationsController {
  constructor(
    private readonly conversations: ConversationsService,
    private readonly store: EventStore,
    private readonly streams: EventStreamService,
    private readonly rateLimiter: PostRateLimiter,
    private readonly enqueuer: TurnEnqueuer,
    private readonly queries: ReadModelQueries,
  ) {}

  @Post()
  @ApiOperation({ summary: 'Start a conversation (ConversationStarted)' })
  create(@CurrentUser() user: AuthUser, @Body() body: CreateConversationDto) {
    return this.conversations.start(user.id, body);
  }

  @Get()
  @ApiOperation({ summary: 'List conversations, newest activity first' })
  list(@CurrentUser() user: AuthUser, @Query() q: ListConversationsQueryDto) {
    return withCursor(() =>
      this.queries.listConversations(user.id, { bookId: q.bookId, limit: q.limit ?? 20, cursor: q.cursor }),
    );
  }

  @Get(':id')
  @ApiOperation({ summary: 'Show a conversation; with ?version=N, its state folded from events 1..N' })
  show(@CurrentUser() user: AuthUser, @Param('id', Id()) id: string, @Query() q: ShowConversationQueryDto) {
    return this.conversations.view(user.id, id, q.version);
  }

  @Patch(':id')
  @ApiOperation({ summary: 'Rename and/or move the reading position' })
  update(
    @CurrentUser() user: AuthUser,
    @Param('id', Id()) id: string,
    @Body() body: UpdateConversationDto,
    @Headers('if-match') ifMatch?: string,
  ) {
    return this.conversations.update(user.id, id, body, parseIfMatch(ifMatch));
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete (ConversationDeleted); every later call answers 404' })
  async remove(@CurrentUser() user: AuthUser, @Param('id', Id()) id: string, @Headers('if-match') ifMatch?: string) {
    await this.enqueuer.conversationDeleted(await this.conversations.delete(user.id, id, parseIfMatch(ifMatch)));
  }

  @Post(':id/messages')
  @HttpCode(202)
  @ApiOperation({ summary: 'Post a message (UserMessagePosted); an agent turn answers it' })
  async post(
    @CurrentUser() user: AuthUser,
    @Param('id', Id()) id: string,
    @Body() body: PostMessageDto,
    @Query() q: PostMessageQueryDto,
    @Headers('idempotency-key') idempotencyKey?: string,
    @Headers('if-match') ifMatch?: string,
  ) {
    const key = parseIdempotencyKey(idempotencyKey);
    const expected = parseIfMatch(ifMatch);
    const input = { content: body.content, selectedText: body.selectedText, multitask: q.multitask ?? 'enqueue' };
    // a retry of a post already made is no new post: it gets its first answer, even at the rate limit
    const earlier = key ? await this.conversations.earlierPost(user.id, id, key, input) : undefined;
    if (!earlier) await this.rateLimiter.consume(user.id);
    const result =
      earlier ?? (await this.conversations.post(user.id, id, input, { idempotencyKey: key, ifMatch: expected }));
    const { interrupted = [], ...answer } = result;
    for (const turnId of interrupted) await this.enqueuer.turnCancelled(id, turnId);
    await this.enqueuer.turnPosted(id, result.turnId);
    return answer;
  }

  @Get(':id/messages')
  @ApiOperation({ summary: 'Messages (user, assistant, tool_result), oldest first, paged' })
  async messages(@CurrentUser() user: AuthUser, @Param('id', Id()) id: string, @Query() q: PageQueryDto) {
    await this.conversations.view(user.id, id);
    return withCursor(() => this.queries.listMessages(id, { limit: q.limit ?? 100, cursor: q.cursor }));
  }

  @Get(':id/events')
  @ApiOperation({ summary: 'The stream as JSON: events with version > after' })
  @ApiOkResponse({ type: EventEnvelopeDto, isArray: true })
  async events(@CurrentUser() user: AuthUser, @Param('id', Id()) id: string, @Query() q: EventsQueryDto) {
    await this.conversations.view(user.id, id);
    const limit = q.limit ?? 1000;
    const events = await this.store.readStream(conversationStreamId(id), { after: q.after ?? 0, limit: limit + 1 });
    const page = events.slice(0, limit);
    return {
      items: page.map(toEnvelope),
      nextCursor: events.length > limit ? String(page[page.length - 1].version) : null,
    };
  }

  @Get(':id/stream')
  @AllowQueryToken()
  @ApiProduces('text/event-stream')
  @ApiOperation({
    summary:
      'SSE: stored events after Last-Event-ID (or ?after=), then live ones; AssistantTextDelta frames carry no id',
  })
  async stream(
    @CurrentUser() user: AuthUser,
    @Param('id', Id()) id: string,
    @Query() q: StreamQueryDto,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    const lastEventId = req.headers['last-event-id'];
    let after = q.after ?? 0;
    if (lastEventId !== undefined) {
      const n = Number(lastEventId);
      if (typeof lastEventId !== 'string' || !/^\d{1,10}$/.test(lastEventId) || n > 2 ** 31 - 1) {
        throw new BadRequestException(['Last-Event-ID must be a stream version']);
      }
      after = n;
    }
    await this.conversations.view(user.id, id);
    await this.streams.serve(id, after, req, res);
  }

  @Post(':id/turns/:turnId/cancel')
  @HttpCode(202)
  @ApiOperation({ summary: 'Cancel a turn (TurnCancelled); a finished turn is left as it is' })
  async cancel(@CurrentUser() user: AuthUser, @Param('id', Id()) id: string, @Param('turnId', Id()) turnId: string) {
    const appended = await this.conversations.cancelTurn(user.id, id, turnId);
    if (appended.length > 0) await this.enqueuer.turnCancelled(id, turnId);
    return { turnId, cancelled: appended.length > 0 };
  }

  @Post(':id/fork')
  @ApiOperation({ summary: 'Fork: a new conversation whose history is events 1..version' })
  fork(@CurrentUser() user: AuthUser, @Param('id', Id()) id: string, @Body() body: ForkConversationDto) {
    return this.conversations.fork(user.id, id, body.version);
  }
}

async function withCursor<T>(query: () => Promise<T>): Promise<T> {
  try {
    return await query();
  } catch (e) {
    if (e instanceof InvalidCursorError) {
      throw new BadRequestException(['cursor is not valid: pass the nextCursor of a previous page unchanged']);
    }
    throw e;
  }
}
