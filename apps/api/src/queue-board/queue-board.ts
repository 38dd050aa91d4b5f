import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter as BoardAdapter } from '@bull-board/fastify';
import { getQueueToken } from '@nestjs/bullmq';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { Queue } from 'bullmq';
import { AGENT_TURNS_QUEUE } from '@parley/agent';
import { BOOK_INGEST_QUEUE } from '@parley/books';
import { AppConfig, CONFIG } from '@parley/config';
import { TokenVerifier } from '../auth/token-verifier';
import { boardCsp } from './board-csp';
import { operatorAuth } from './operator-auth';

/** The queues an operator sees on the board. */
export const BOARD_QUEUES = [AGENT_TURNS_QUEUE, BOOK_INGEST_QUEUE];

/**
 * Mounts Bull Board at QUEUE_BOARD_PATH, when that is set (call it before init): unset, nothing
 * answers there but the usual 404. A Fastify plugin rather than a Nest module, so the global
 * prefix, the bearer-only AuthGuard and the OpenAPI document never see its routes. Every request
 * under the path, an unknown one included, passes the operator check first.
 */
export function mountQueueBoard(app: NestFastifyApplication): void {
  const config = app.get<AppConfig>(CONFIG);
  const boardPath = config.queueBoardPath;
  if (!boardPath) return;
  const adapter = new BoardAdapter().setBasePath(boardPath);
  createBullBoard({
    queues: BOARD_QUEUES.map((name) => {
      const queue = app.get<Queue>(getQueueToken(name));
      // named as their Redis keys begin (QUEUE_PREFIX:name), grouped under the prefix
      return new BullMQAdapter(queue, { prefix: `${queue.opts.prefix}:`, delimiter: ':' });
    }),
    serverAdapter: adapter,
    options: { uiConfig: { boardTitle: 'Parley queues' } },
  });
  const csp = boardCsp();
  const allowed = operatorAuth(new TokenVerifier(config.auth), boardPath);
  const http = app.getHttpAdapter().getInstance();
  http.addHook('onRequest', async (req, reply) => {
    const rest = under(req.url, boardPath);
    if (rest === undefined) return;
    if (!(await allowed(req, reply))) return reply; // answered: a problem or the redirect
    reply.headers({
      'content-security-policy': csp,
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
    });
    // operators' views of jobs (payloads, errors) stay out of caches; the hashed static files may be kept
    if (!rest.startsWith('/static/')) reply.header('cache-control', 'no-store');
  });
  void app.register(adapter.registerPlugin(), { prefix: boardPath });
}

/** The path after `base` when `url` is at or under it (case-insensitive, as routes match), else undefined. */
function under(url: string, base: string): string | undefined {
  const path = url.split('?')[0];
  if (path.slice(0, base.length).toLowerCase() !== base.toLowerCase()) return undefined;
  const rest = path.slice(base.length);
  return rest === '' || rest.startsWith('/') ? rest : undefined;
}
