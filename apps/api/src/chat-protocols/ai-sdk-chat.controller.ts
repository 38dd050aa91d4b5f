import { Body, Controller, Get, HttpCode, Inject, Logger, Param, Post, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiNoContentResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AppConfig, CONFIG } from '@parley/config';
import type { FastifyReply } from 'fastify';
import { AuthUser } from '../auth/auth.guard';
import { CurrentUser } from '../auth/current-user.decorator';
import { hijackForStream } from '../http/cors';
import { Uuid } from '../http/uuid-param';
import { ApiEventStream } from '../openapi/api-event-stream';
import { ApiIdParams } from '../openapi/api-id-params';
import { AUTH_PROBLEMS, ApiProblems, BODY_PROBLEMS } from '../openapi/api-problems';
import { StreamSlots } from '../rate-limits/stream-slots';
import { chatRequestOf } from './ai-sdk-chat-request';
import { serveUiMessageStream } from './ai-sdk-turn-stream';
import { FeedTurn, TurnFeed } from './turn-feed';

const STREAM_DESCRIPTION =
  'The turn as the AI SDK UI message stream (header `x-vercel-ai-ui-message-stream: v1`): start (messageId: the turnId), ' +
  'text-start/text-delta/text-end, tool-input-available/tool-output-available (search_book), source-document per ' +
  'citation, then finish; error for a TurnFailed, abort for a TurnCancelled. See docs/ai-sdk.md.';

/**
 * The AI SDK's chat protocol (useChat with a DefaultChatTransport) over the same turns as
 * POST …/messages: a post answered with the turn as a UI message stream, and the resume of the
 * turn in flight that the transport's reconnectToStream asks for.
 */
@ApiTags('ai-sdk')
@ApiBearerAuth()
@ApiProblems(AUTH_PROBLEMS)
@Controller('ai-sdk/chat')
export class AiSdkChatController {
  private readonly log = new Logger(AiSdkChatController.name);

  constructor(
    private readonly feed: TurnFeed,
    private readonly slots: StreamSlots,
    @Inject(CONFIG) private readonly config: AppConfig,
  ) {}

  @Post()
  @HttpCode(200)
  @ApiOperation({
    operationId: 'AiSdkChatController_chat',
    summary: "Post the chat's last user message (UserMessagePosted) and stream its turn as a UI message stream",
    description:
      'The body is what DefaultChatTransport sends: `id` the conversation id (POST /v1/conversations first), ' +
      '`messages` the UIMessages, the last one the reader’s. Aborting the request cancels the turn (TurnCancelled).',
  })
  @ApiBody({
    schema: {
      type: 'object',
      required: ['id', 'messages'],
      properties: {
        id: { type: 'string', format: 'uuid', description: "the conversation's id" },
        messages: { type: 'array', items: { type: 'object' }, description: 'UIMessages; the last is posted' },
        trigger: { type: 'string', enum: ['submit-message', 'regenerate-message'] },
        messageId: { type: 'string' },
      },
    },
  })
  @ApiEventStream(STREAM_DESCRIPTION)
  @ApiProblems(BODY_PROBLEMS, 'conversation_not_found', 'rate_limited', 'budget_exceeded', 'idempotency_key_reused')
  async chat(@CurrentUser() user: AuthUser, @Body() body: unknown, @Res() reply: FastifyReply): Promise<void> {
    const request = await chatRequestOf(body);
    // the stream holds the response open as GET …/stream does: one of the reader's stream slots
    await this.slots.holding(user.id, async () => {
      const turn = await this.feed.post(user, request.conversationId, request.text, request.idempotencyKey);
      await this.serve(turn, reply, true);
    });
  }

  @Get(':id/stream')
  @ApiIdParams('id')
  @ApiOperation({
    operationId: 'AiSdkChatController_resume',
    summary: 'The turn in flight as a UI message stream, from its start (204 when none is in flight)',
    description: 'What DefaultChatTransport.reconnectToStream asks for. Leaving this stream does not cancel the turn.',
  })
  @ApiEventStream(STREAM_DESCRIPTION)
  @ApiNoContentResponse({ description: 'no turn in flight' })
  @ApiProblems('validation_failed', 'conversation_not_found', 'rate_limited')
  async resume(
    @CurrentUser() user: AuthUser,
    @Param('id', Uuid('id')) id: string,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const turn = await this.feed.inFlight(user, id);
    if (!turn) return void reply.code(204).send();
    await this.slots
      .holding(user.id, () => this.serve(turn, reply, false))
      .catch((e) => {
        turn.close(); // refused a slot: the turn is not followed (after a stream, closing again does nothing)
        throw e;
      });
  }

  /** The turn as a UI message stream on the raw response, which the SDK writes itself. */
  private async serve(turn: FeedTurn, reply: FastifyReply, cancelOnLeave: boolean): Promise<void> {
    hijackForStream(reply);
    await serveUiMessageStream(turn, reply.raw, {
      cancelOnLeave,
      keepAliveMs: this.config.sse.pingMs,
      onError: (e) => this.log.error(`UI message stream of turn ${turn.turnId} failed: ${String(e)}`),
    });
  }
}
