import { Global, Module, Provider } from '@nestjs/common';
import { ErasureRepository } from '@parley/erasure';
import { ConsumerStats, EventLogQueries, FoldSnapshots } from '@parley/event-store';
import { ConversationLogQueries, TenantBudgets, TenantLedger, UsageLedger } from '@parley/read-models';
import { WebhookEndpoints, WebhookOutbox } from '@parley/webhooks';

/**
 * The repositories over the process's pg Pool, listed once for the API and the worker: each is
 * built by Nest, one per process, and injected where it is used, instead of `new X(pool)` in the
 * constructors of the services that use it. (A repository on a transaction's client is still
 * built there, with that client.)
 */
export const REPOSITORIES: Provider[] = [
  ConsumerStats,
  ConversationLogQueries,
  ErasureRepository,
  EventLogQueries,
  FoldSnapshots,
  TenantBudgets,
  TenantLedger,
  UsageLedger,
  WebhookEndpoints,
  WebhookOutbox,
];

/** REPOSITORIES for every module of the app that imports this (the API's and the worker's root modules). */
@Global()
@Module({ providers: REPOSITORIES, exports: REPOSITORIES })
export class RepositoriesModule {}
