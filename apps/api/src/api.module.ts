import { Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD } from '@nestjs/core';
import { ModelTableModule } from '@parley/agent';
import { ConfigModule } from '@parley/config';
import { EventStoreModule } from '@parley/event-store';
import { RepositoriesModule } from '../../common/repositories.module';
import { DatabaseModule, loggerModule, queueRootModule, RedisModule, TracingShutdown } from '@parley/platform';
import { BooksHttpModule } from './books/books-http.module';
import { ConversationsModule } from './conversations/conversations.module';
import { MetricsModule } from './metrics/metrics.module';
import { AuthGuard } from './auth/auth.guard';
import { tokenVerifierProvider } from './auth/token-verifier';
import { HealthController } from './health/health.controller';
import { ProtectedResourceController } from './auth/protected-resource.controller';
import { HttpExceptionFilter } from './http/http-exception.filter';
import { ProblemsController } from './http/problems.controller';
import { WebModule } from './web/web.module';
import { McpModule } from './mcp/mcp.module';
import { ChatProtocolsModule } from './chat-protocols/chat-protocols.module';
import { WebhooksModule } from './webhooks/webhooks.module';
import { TenantModule } from './tenant/tenant.module';

/** The HTTP root: controllers call services; it enqueues, never consumes. */
@Module({
  imports: [
    ConfigModule,
    // LLM_PRICES over the shipped prices, for policy checks and usage reports
    ModelTableModule,
    loggerModule('api'),
    DatabaseModule,
    EventStoreModule,
    RepositoriesModule,
    RedisModule,
    queueRootModule(),
    MetricsModule,
    ConversationsModule,
    BooksHttpModule,
    WebModule,
    McpModule,
    ChatProtocolsModule,
    WebhooksModule,
    TenantModule,
  ],
  controllers: [HealthController, ProblemsController, ProtectedResourceController],
  providers: [
    TracingShutdown,
    // one verifier, one cache: the guard, the check before the body, /mcp and the queue board
    tokenVerifierProvider,
    { provide: APP_GUARD, useClass: AuthGuard },
    { provide: APP_FILTER, useClass: HttpExceptionFilter },
  ],
})
export class ApiModule {}
