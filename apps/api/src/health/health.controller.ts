import { Controller, Get, Inject } from '@nestjs/common';
import { problem } from '../http/problem.exception';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiProblems } from '../openapi/api-problems';
import { Pool } from 'pg';
import { RedisConnections } from '@parley/platform';
import { Public } from '../auth/auth.guard';
import { AppConfig, CONFIG } from '@parley/config';
import { BuildInfo, readBuildInfo } from './build-info';
import { probeModelServer } from './model-server';

@ApiTags('operations')
@Public()
@Controller()
export class HealthController {
  private buildInfo?: BuildInfo;

  constructor(
    @Inject(Pool) private readonly pool: Pool,
    private readonly redis: RedisConnections,
    @Inject(CONFIG) private readonly config: AppConfig,
  ) {}

  @Get('healthz')
  @ApiOperation({ summary: 'Liveness: the process answers' })
  @ApiOkResponse({
    schema: { type: 'object', required: ['status'], properties: { status: { type: 'string', enum: ['ok'] } } },
  })
  healthz() {
    return { status: 'ok' };
  }

  /** The release this process runs: package.json's version and the commit it was built from (null when the build did not know it). */
  @Get('version')
  @ApiOperation({ summary: 'The version (package.json) and the commit this build was made from' })
  @ApiOkResponse({
    schema: {
      type: 'object',
      required: ['version', 'commit'],
      properties: {
        version: { type: 'string', example: '0.3.0' },
        commit: {
          type: 'string',
          nullable: true,
          description: 'the git commit of the build (CHANGELOG.md names each release by its commit); null when unknown',
        },
      },
    },
  })
  version(): BuildInfo {
    this.buildInfo ??= readBuildInfo();
    return this.buildInfo;
  }

  /**
   * Ready when both Postgres and Redis answer within a second. checks.search says how books are
   * searched (hybrid: full text and vectors; lexical: full text only) and never makes it unready:
   * an embeddings provider that is down leaves search lexical. checks.model, with a self-hosted
   * OpenAI-compatible server (OPENAI_BASE_URL), says whether it answers within a second; it never
   * makes the API unready either: books, conversations and streams are served without it, and
   * every replica would leave the balancer at once for a fault none of them can mend.
   */
  @Get('readyz')
  @ApiOperation({ summary: 'Readiness: Postgres and Redis answer within a second' })
  @ApiOkResponse({
    schema: {
      type: 'object',
      required: ['status', 'checks'],
      properties: {
        status: { type: 'string', enum: ['ready'] },
        checks: {
          type: 'object',
          required: ['database', 'redis', 'search'],
          properties: {
            database: { type: 'string', enum: ['ok', 'down'] },
            redis: { type: 'string', enum: ['ok', 'down'] },
            search: {
              type: 'string',
              enum: ['hybrid', 'lexical'],
              description: 'hybrid: full text and embeddings fused (EMBEDDINGS_PROVIDER set); lexical: full text only',
            },
            model: {
              type: 'string',
              enum: ['ok', 'down'],
              description:
                'only with a self-hosted OpenAI-compatible server (OPENAI_BASE_URL): whether it answers within a second; never makes the API unready',
            },
          },
        },
      },
    },
  })
  @ApiProblems('not_ready', 'internal_error')
  async readyz() {
    const within = <T>(p: Promise<T>) =>
      Promise.race([p, new Promise<never>((_, rej) => setTimeout(() => rej(new Error('timeout')), 1_000).unref())]);
    const { llm } = this.config;
    const modelServer = llm.providers.includes('openai') ? llm.openai.baseUrl : undefined;
    const [db, redis, model] = await Promise.allSettled([
      within(this.pool.query('SELECT 1')),
      within(this.redis.main.ping()),
      modelServer ? probeModelServer(modelServer, llm.openai.apiKey) : Promise.resolve(undefined),
    ]);
    const checks = {
      database: db.status === 'fulfilled' ? 'ok' : 'down',
      redis: redis.status === 'fulfilled' ? 'ok' : 'down',
      search: this.config.embeddings.provider === 'none' ? 'lexical' : 'hybrid',
      ...(model.status === 'fulfilled' && model.value ? { model: model.value } : {}),
    };
    if (checks.database !== 'ok' || checks.redis !== 'ok')
      throw problem('not_ready', 'the database or Redis does not answer', { checks });
    return { status: 'ready', checks };
  }
}
