import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter as BoardAdapter } from '@bull-board/fastify';
import { getQueueToken } from '@nestjs/bullmq';
import { Logger, NotFoundException } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { Queue } from 'bullmq';
import type { FastifyPluginAsync } from 'fastify';
import { AGENT_TURNS_QUEUE } from '@parley/agent';
import { BOOK_INGEST_QUEUE } from '@parley/books';
import { AppConfig, CONFIG } from '@parley/config';
import { TokenVerifier } from '../auth/token-verifier';
import { sendProblem } from '../http/http-exception.filter';
import { boardCsp } from './board-csp';
import { operatorAuth } from './operator-auth';

/** The queues an operator sees on the board. */
export const BOARD_QUEUES = [AGENT_TURNS_QUEUE, BOOK_INGEST_QUEUE];

/**
 * Mounts Bull Board at QUEUE_BOARD_PATH, when that is set (call it before init): unset, nothing
 * answers there but the usual 404. A Fastify plugin rather than a Nest module, so the global
 * prefix, the bearer-only AuthGuard and the OpenAPI document never see its routes. Every request
 * the router gives to the board (an unknown path under it included) passes the operator check first.
 */
export function mountQueueBoard(app: NestFastifyApplication): void {
  const config = app.get<AppConfig>(CONFIG);
  const log = new Logger('QueueBoard');
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
  const allowed = operatorAuth(app.get(TokenVerifier), boardPath);
  // The check sits in the board's own encapsulated scope, on the route the router chose: every
  // request it gives to the board, however its path is spelled (%73, //, case, a trailing slash),
  // passes it first. A hook on the raw URL was walked around by any spelling the router decodes.
  const board: FastifyPluginAsync = async (scope) => {
    scope.addHook('onRequest', async (req, reply) => {
      if (!(await allowed(req, reply))) return reply; // answered: a problem or the redirect
      reply.headers({
        'content-security-policy': csp,
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
      });
      // operators' views of jobs (payloads, errors) stay out of caches; the hashed static files may be kept
      if (!req.is404 && !isStatic(req.routeOptions.url, boardPath)) reply.header('cache-control', 'no-store');
    });
    // an unknown path under the board is the board's too: it passes the check before its 404
    scope.setNotFoundHandler((req, reply) =>
      sendProblem(reply, new NotFoundException(`Cannot ${req.method} ${req.url}`), log),
    );
    await scope.register(adapter.registerPlugin());
  };
  void app.register(board, { prefix: boardPath });
}

/** A route of the board's hashed static files (its pattern, as registered under the board's path). */
function isStatic(route: string | undefined, base: string): boolean {
  return (route ?? '').toLowerCase().startsWith(`${base.toLowerCase()}/static/`);
}
