import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import { getQueueToken } from '@nestjs/bullmq';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { Queue } from 'bullmq';
import type { NextFunction, Request, Response } from 'express';
import { AGENT_TURNS_QUEUE } from '@parley/agent';
import { BOOK_INGEST_QUEUE } from '@parley/books';
import { AppConfig, CONFIG } from '@parley/config';
import { TokenVerifier } from '../auth/token-verifier';
import { boardCsp } from './board-csp';
import { operatorAuth } from './operator-auth';

/** The queues an operator sees on the board. */
export const BOARD_QUEUES = [AGENT_TURNS_QUEUE, BOOK_INGEST_QUEUE];

/**
 * Mounts Bull Board at QUEUE_BOARD_PATH, before Nest's routes (call it before init), when that is
 * set: unset, nothing answers there but the usual 404. Plain Express rather than a Nest module, so
 * the global prefix, the bearer-only AuthGuard and the OpenAPI document never see its routes.
 */
export function mountQueueBoard(app: NestExpressApplication): void {
  const config = app.get<AppConfig>(CONFIG);
  const boardPath = config.queueBoardPath;
  if (!boardPath) return;
  const adapter = new ExpressAdapter().setBasePath(boardPath);
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
  const headers = (req: Request, res: Response, next: NextFunction) => {
    res.set({ 'content-security-policy': csp, 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer' });
    // operators' views of jobs (payloads, errors) stay out of caches; the hashed static files may be kept
    if (!req.path.startsWith('/static/')) res.set('cache-control', 'no-store');
    next();
  };
  app.use(boardPath, operatorAuth(new TokenVerifier(config.auth), boardPath), headers, adapter.getRouter());
}
