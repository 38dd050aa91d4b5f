import { Controller, Get, Param, Query, Req, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiHeader, ApiOkResponse, ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AllowQueryToken, AuthUser } from '../auth/auth.guard';
import { CurrentUser } from '../auth/current-user.decorator';
import { Uuid } from '../http/uuid-param';
import { ApiEventStream } from '../openapi/api-event-stream';
import { ApiIdParams } from '../openapi/api-id-params';
import { AUTH_PROBLEMS, ApiProblems } from '../openapi/api-problems';
import { EventsQueryDto, StreamQueryDto } from './conversation.dto';
import { EventPageDto } from './conversation-responses.dto';
import { ConversationReads } from './conversation-reads.service';
import { EventStreamService } from './event-stream.service';
import { LAST_EVENT_ID_PATTERN, parseLastEventId } from './last-event-id';
import { StreamSlots } from '../rate-limits/stream-slots';

/**
 * A conversation's event log: as JSON pages, and as a live SSE stream.
 * The operationIds are the document's, kept from when one controller served every conversation route.
 */
@ApiTags('conversations')
@ApiBearerAuth()
@ApiProblems(AUTH_PROBLEMS)
@Controller('conversations')
export class ConversationEventsController {
  constructor(
    private readonly reads: ConversationReads,
    private readonly streams: EventStreamService,
    private readonly slots: StreamSlots,
  ) {}

  @Get(':id/events')
  @ApiIdParams('id')
  @ApiOperation({
    operationId: 'ConversationsController_events',
    summary: 'The stream as JSON: events with version > after',
  })
  @ApiOkResponse({ type: EventPageDto })
  @ApiProblems('validation_failed', 'conversation_not_found')
  events(@CurrentUser() user: AuthUser, @Param('id', Uuid('id')) id: string, @Query() q: EventsQueryDto) {
    return this.reads.events(user.id, id, q);
  }

  @Get(':id/stream')
  @ApiIdParams('id')
  @AllowQueryToken()
  @ApiSecurity('access_token')
  @ApiOperation({
    operationId: 'ConversationsController_stream',
    summary:
      'SSE: stored events after Last-Event-ID (or ?after=), then live ones; AssistantTextDelta frames carry no id',
  })
  @ApiHeader({
    name: 'Last-Event-ID',
    required: false,
    schema: { type: 'string', pattern: LAST_EVENT_ID_PATTERN, maxLength: 10 },
    description: 'the last version received; the stream resumes after it (wins over ?after=)',
  })
  @ApiEventStream(
    'One frame per stored event: `id:` its version, `event:` its type, `data:` its envelope (ConversationEventEnvelope). ' +
      'Between them, `event: AssistantTextDelta` frames without id carry `{turnId, iteration, text}` as the reply streams.',
    'ConversationStreamFrame',
  )
  @ApiProblems('validation_failed', 'conversation_not_found', 'rate_limited')
  async stream(
    @CurrentUser() user: AuthUser,
    @Param('id', Uuid('id')) id: string,
    @Query() q: StreamQueryDto,
    @Req() req: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const after = parseLastEventId(req.headers['last-event-id']) ?? q.after ?? 0;
    await this.reads.assertVisible(user.id, id);
    await this.slots.serving(user.id, reply, () => this.streams.serve(id, after, req.raw, reply.raw));
  }
}
