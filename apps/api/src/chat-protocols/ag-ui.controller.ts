import { Body, Controller, HttpCode, Inject, Logger, Post, Req, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AppConfig, CONFIG } from '@parley/config';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AuthUser } from '../auth/auth.guard';
import { CurrentUser } from '../auth/current-user.decorator';
import { hijackForStream } from '../http/cors';
import { ApiEventStream } from '../openapi/api-event-stream';
import { AUTH_PROBLEMS, ApiProblems, BODY_PROBLEMS } from '../openapi/api-problems';
import { StreamSlots } from '../rate-limits/stream-slots';
import { agUiRunOf } from './ag-ui-run-input';
import { serveAgUiRun } from './ag-ui-turn-stream';
import { TurnFeed } from './turn-feed';

/** AG-UI (an HttpAgent's run) over the same turns as POST …/messages. */
@ApiTags('ag-ui')
@ApiBearerAuth()
@ApiProblems(AUTH_PROBLEMS)
@Controller('ag-ui')
export class AgUiController {
  private readonly log = new Logger(AgUiController.name);

  constructor(
    private readonly feed: TurnFeed,
    private readonly slots: StreamSlots,
    @Inject(CONFIG) private readonly config: AppConfig,
  ) {}

  @Post()
  @HttpCode(200)
  @ApiOperation({
    operationId: 'AgUiController_run',
    summary:
      'Run the agent on a RunAgentInput: its last user message is posted (UserMessagePosted), the turn streamed as AG-UI events',
    description:
      '`threadId` is the conversation id (POST /v1/conversations first); a runId sent again is the same post. ' +
      'Aborting the request cancels the turn (TurnCancelled). See docs/ag-ui.md.',
  })
  @ApiBody({
    schema: {
      type: 'object',
      required: ['threadId', 'runId', 'messages', 'tools', 'context'],
      description: 'an AG-UI RunAgentInput, checked with @ag-ui/core’s RunAgentInputSchema',
      properties: {
        threadId: { type: 'string', format: 'uuid' },
        runId: { type: 'string' },
        messages: { type: 'array', items: { type: 'object' } },
        tools: { type: 'array', items: { type: 'object' } },
        context: { type: 'array', items: { type: 'object' } },
      },
    },
  })
  @ApiEventStream(
    'AG-UI events (@ag-ui/encoder): RUN_STARTED, TEXT_MESSAGE_START/CONTENT/END, TOOL_CALL_START/ARGS/END and ' +
      'TOOL_CALL_RESULT (search_book), then RUN_FINISHED (result: turnId, messageId, citations) or RUN_ERROR.',
  )
  @ApiProblems(BODY_PROBLEMS, 'conversation_not_found', 'rate_limited', 'budget_exceeded', 'idempotency_key_reused')
  async run(
    @CurrentUser() user: AuthUser,
    @Body() body: unknown,
    @Req() req: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const run = agUiRunOf(body);
    // the run holds the response open as GET …/stream does: one of the reader's stream slots
    await this.slots.holding(user.id, async () => {
      const turn = await this.feed.post(user, run.threadId, run.text, `ag-ui:${run.runId}`);
      hijackForStream(reply);
      await serveAgUiRun(turn, run, req.headers.accept, reply.raw, this.config.sse.pingMs).catch((e) =>
        this.log.error(`AG-UI run of turn ${turn.turnId} failed: ${String(e)}`),
      );
    });
  }
}
