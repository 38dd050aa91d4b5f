import { Module } from '@nestjs/common';
import { WebhookRegistrations } from './webhook-registrations.service';
import { WebhooksController } from './webhooks.controller';

/** The /webhooks routes; deliveries are the worker's. */
@Module({
  controllers: [WebhooksController],
  providers: [WebhookRegistrations],
})
export class WebhooksModule {}
