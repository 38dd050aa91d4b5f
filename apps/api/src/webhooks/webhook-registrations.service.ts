import { Inject, Injectable, Logger } from '@nestjs/common';
import { AppConfig, CONFIG } from '@parley/config';
import {
  checkWebhookUrl,
  newWebhookSecret,
  WebhookEndpoint,
  WebhookEndpoints,
  WebhookUrlRefused,
} from '@parley/webhooks';
import { problem } from '../http/problem.exception';
import { CreateWebhookDto } from './webhook.dto';

/** Endpoints one reader may have. */
export const WEBHOOKS_PER_READER = 20;

/** A reader's webhook endpoints: registered after their URL's check, listed, deleted. */
@Injectable()
export class WebhookRegistrations {
  private readonly logger = new Logger(WebhookRegistrations.name);
  constructor(
    private readonly endpoints: WebhookEndpoints,
    @Inject(CONFIG) private readonly config: AppConfig,
  ) {}

  async register(ownerId: string, body: CreateWebhookDto): Promise<WebhookEndpoint & { secret: string }> {
    try {
      await checkWebhookUrl(body.url, { allowPrivate: this.config.webhooks.allowPrivateUrls });
    } catch (e) {
      if (e instanceof WebhookUrlRefused) {
        // what the name resolved to stays here: the answer must not make this resolver an oracle
        this.logger.warn(`webhook url refused for ${ownerId}: ${e.detail}`);
        throw problem('webhook_url_refused', `url: ${e.message}`);
      }
      throw e;
    }
    const secret = newWebhookSecret();
    const created = await this.endpoints.create(
      ownerId,
      { url: body.url, events: body.events, secret },
      WEBHOOKS_PER_READER,
    );
    if (!created)
      throw problem(
        'webhook_limit_reached',
        `a reader may have ${WEBHOOKS_PER_READER} webhook endpoints; delete one first`,
      );
    return { ...created, secret };
  }

  list(ownerId: string): Promise<WebhookEndpoint[]> {
    return this.endpoints.list(ownerId);
  }

  async delete(ownerId: string, id: string): Promise<void> {
    if (!(await this.endpoints.delete(ownerId, id))) throw problem('webhook_not_found', 'no such webhook endpoint');
  }
}
