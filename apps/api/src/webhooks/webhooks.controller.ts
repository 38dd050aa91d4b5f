import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
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
import { CreatedWebhookDto, CreateWebhookDto, WebhookListDto } from './webhook.dto';
import { WebhookRegistrations } from './webhook-registrations.service';

/** The caller's webhook endpoints (docs/webhooks.md). */
@ApiTags('webhooks')
@ApiBearerAuth()
@ApiProblems(AUTH_PROBLEMS)
@Controller('webhooks')
export class WebhooksController {
  constructor(private readonly registrations: WebhookRegistrations) {}

  @Post()
  @ApiOperation({
    summary: 'Register an endpoint for turn.ended, batch.completed, book.ready or turn.approval_requested deliveries',
    description:
      'Deliveries follow Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature; body {type, timestamp, ' +
      "data}), at least once, for the caller's own conversations and books. The answer holds the signing secret, " +
      'shown only here.',
  })
  @ApiCreatedResponse({ type: CreatedWebhookDto })
  @ApiProblems(BODY_PROBLEMS, 'webhook_url_refused', 'webhook_limit_reached')
  register(@CurrentUser() user: AuthUser, @Body() body: CreateWebhookDto) {
    return this.registrations.register(user.id, body);
  }

  @Get()
  @ApiOperation({ summary: "The caller's endpoints, disabled ones included (with why)" })
  @ApiOkResponse({ type: WebhookListDto })
  async list(@CurrentUser() user: AuthUser): Promise<WebhookListDto> {
    return { items: await this.registrations.list(user.id) };
  }

  @Delete(':id')
  @ApiIdParams('id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete an endpoint and its pending deliveries' })
  @ApiNoContentResponse({ description: 'deleted' })
  @ApiProblems('validation_failed', 'webhook_not_found')
  async delete(@CurrentUser() user: AuthUser, @Param('id', Uuid('id')) id: string): Promise<void> {
    await this.registrations.delete(user.id, id);
  }
}
