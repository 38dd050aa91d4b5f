import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import zlib from 'node:zlib';

/** An error below our code that carries the status it means (the problem filter reads `status` and `type`). */
export class BodyError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly type: string,
  ) {
    super(message);
  }
}

/** Postgres text and jsonb cannot hold U+0000: refuse it while parsing (a 400), before anything is stored. */
function refuseNul(_key: string, value: unknown): unknown {
  if (typeof value === 'string' && value.includes('\u0000'))
    throw new SyntaxError('strings must not contain U+0000 (NUL)');
  return value;
}

/**
 * Parses a JSON body as the API always has: `{}` for an empty body, only an object or an array at
 * the top (a SyntaxError worded as JSON.parse words it otherwise), no U+0000, utf-* charsets,
 * gzip/deflate/br bodies inflated, and `limit` bytes at most (413 as soon as the body is known to be over).
 */
export function readJsonBody(req: IncomingMessage, limit: number, done: (err: Error | null, body?: unknown) => void) {
  const charset = charsetOf(req.headers['content-type']);
  if (!charset.startsWith('utf-'))
    return done(new BodyError(415, `unsupported charset "${charset.toUpperCase()}"`, 'charset.unsupported'));
  const encoding = (req.headers['content-encoding'] ?? 'identity').toLowerCase();
  const inflate = inflaterOf(encoding);
  if (inflate === null) {
    return done(new BodyError(415, `unsupported content encoding "${encoding}"`, 'encoding.unsupported'));
  }
  const stream: Readable = inflate ? req.pipe(inflate) : req;
  const declared = inflate ? NaN : Number(req.headers['content-length'] ?? NaN);
  readLimited(req, stream, declared, limit, (err, raw) => {
    if (err) return done(err);
    try {
      done(null, parseStrict(decode(raw!, charset)));
    } catch (e) {
      // a 400 SyntaxError is what Nest answers as a 400 with the parser's message
      done(Object.assign(e as Error, { status: 400, type: 'entity.parse.failed' }));
    }
  });
}

/** The parse body-parser's strict mode does, with its error messages. */
function parseStrict(body: string): unknown {
  if (body.length === 0) return {};
  let start = 0;
  while (start < body.length && ' \t\n\r'.includes(body[start])) start++; // JSON's own whitespace
  const first = body[start];
  if (first !== '{' && first !== '[') throw strictViolation(body, first);
  // a NUL can only be written \u0000 in JSON: without that text no string can hold one, and the
  // reviver, which slows parsing several times over, has nothing to find
  return body.includes('\\u0000') ? JSON.parse(body, refuseNul) : JSON.parse(body);
}

/** JSON.parse's own error for `body` with everything from its first character on made invalid. */
function strictViolation(body: string, first: string | undefined): SyntaxError {
  const index = first ? body.indexOf(first) : -1;
  const partial = index === -1 ? '' : body.slice(0, index) + '#'.repeat(body.length - index);
  try {
    JSON.parse(partial);
    return new SyntaxError('strict violation');
  } catch (e) {
    const message = (e as Error).message.replace(/#+/g, (hashes) => body.slice(index, index + hashes.length));
    return new SyntaxError(message);
  }
}

function charsetOf(contentType: string | undefined): string {
  const m = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType ?? '');
  return (m?.[1] ?? 'utf-8').toLowerCase();
}

function decode(raw: Buffer, charset: string): string {
  if (charset === 'utf-8' || charset === 'utf8') {
    const bom = raw.length >= 3 && raw[0] === 0xef && raw[1] === 0xbb && raw[2] === 0xbf;
    return raw.toString('utf8', bom ? 3 : 0);
  }
  return new TextDecoder(charset).decode(raw);
}

/** undefined: no inflation; null: an encoding we do not read. */
function inflaterOf(encoding: string): zlib.Inflate | zlib.Gunzip | zlib.BrotliDecompress | undefined | null {
  switch (encoding) {
    case 'identity':
      return undefined;
    case 'deflate':
      return zlib.createInflate();
    case 'gzip':
      return zlib.createGunzip();
    case 'br':
      return zlib.createBrotliDecompress();
    default:
      return null;
  }
}

/** Reads `stream` whole; past `limit` (declared or read), or at a length other than `declared`, an error at once. */
function readLimited(
  req: IncomingMessage,
  stream: Readable,
  declared: number,
  limit: number,
  done: (err: Error | null, raw?: Buffer) => void,
) {
  const chunks: Buffer[] = [];
  let received = 0;
  let finished = false;
  const finish = (err: Error | null, raw?: Buffer) => {
    if (finished) return;
    finished = true;
    stream.removeListener('data', onData);
    if (!err) return done(null, raw);
    // answered at once, not after the rest of the body (declared at any length) has been read off:
    // the answer says Connection: close and Node closes the connection once it is out
    if (stream !== req) {
      req.unpipe();
      stream.destroy();
    }
    done(err);
  };
  const onData = (chunk: Buffer) => {
    received += chunk.length;
    if (received > limit) return finish(new BodyError(413, 'request entity too large', 'entity.too.large'));
    chunks.push(chunk);
  };
  if (declared > limit) return finish(new BodyError(413, 'request entity too large', 'entity.too.large'));
  stream.on('data', onData);
  stream.once('end', () => {
    if (!Number.isNaN(declared) && received !== declared) {
      return finish(new BodyError(400, 'request size did not match content length', 'request.size.invalid'));
    }
    finish(null, Buffer.concat(chunks, received));
  });
  stream.once('error', (e: Error) => finish(new BodyError(400, e.message, 'stream.error')));
  req.once('aborted', () => finish(new BodyError(400, 'request aborted', 'request.aborted')));
}
