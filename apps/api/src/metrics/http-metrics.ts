import type { FastifyInstance } from 'fastify';
import { MetricsService } from './metrics.service';

/** Times every request, labelled by its route pattern (not the raw path, to keep cardinality low). */
export function timeRequests(http: FastifyInstance, metrics: MetricsService): void {
  http.addHook('onRequest', (req, reply, done) => {
    const end = metrics.httpDuration.startTimer();
    // the raw response's finish: an SSE stream, written to it directly, ends there too
    reply.raw.once('finish', () =>
      end({ method: req.method, route: req.routeOptions.url ?? 'unmatched', status: String(reply.raw.statusCode) }),
    );
    done();
  });
}
