import contentType from 'content-type';
import etag from 'etag';
import type { FastifyInstance } from 'fastify';
import fresh from 'fresh';

/**
 * The headers every answer with a body has always had: a text body's content type names its
 * charset (utf-8), the body gets a weak ETag, and a GET or HEAD whose If-None-Match (or
 * If-Modified-Since) it satisfies is answered 304 without the body. Files (streams) carry their own.
 */
export function addBodyHeaders(http: FastifyInstance): void {
  http.addHook('onSend', (req, reply, payload, done) => {
    if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return done(null, payload);
    const type = reply.getHeader('content-type');
    if (typeof payload === 'string' && typeof type === 'string') reply.header('content-type', withUtf8(type));
    if (!reply.hasHeader('etag')) reply.header('etag', etag(payload, { weak: true }));
    const status = reply.statusCode;
    const cacheable =
      (req.method === 'GET' || req.method === 'HEAD') && ((status >= 200 && status < 300) || status === 304);
    const validators = {
      etag: header(reply.getHeader('etag')),
      'last-modified': header(reply.getHeader('last-modified')),
    };
    if (!cacheable || !fresh(req.headers, validators)) return done(null, payload);
    reply.code(304);
    reply.removeHeader('content-type');
    reply.removeHeader('content-length');
    done(null, null);
  });
}

/** `type` with charset=utf-8, its parameters in order (as Express wrote them). */
function withUtf8(type: string): string {
  if (type.endsWith('; charset=utf-8') && type.indexOf(';') === type.length - 15) return type;
  const parsed = contentType.parse(type);
  parsed.parameters.charset = 'utf-8';
  return contentType.format(parsed);
}

const header = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
