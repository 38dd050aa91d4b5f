import type { IncomingMessage } from 'node:http';
import { PassThrough } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { BodyError, readJsonBody } from './json-body';

/** A request whose body is `body`, sent in one piece. */
function request(body: string | Buffer, headers: Record<string, string> = {}): IncomingMessage {
  const stream = Object.assign(new PassThrough(), {
    headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), ...headers },
    complete: false,
  });
  stream.end(body, () => (stream.complete = true));
  return stream as unknown as IncomingMessage;
}

const read = (req: IncomingMessage, limit = 1024) =>
  new Promise<unknown>((resolve, reject) =>
    readJsonBody(req, limit, (err, body) => (err ? reject(err) : resolve(body))),
  );

describe(readJsonBody.name, () => {
  it('parses objects and arrays, and an empty body as {}', async () => {
    await expect(read(request(' {"a":[1,"x"]}'))).resolves.toEqual({ a: [1, 'x'] });
    await expect(read(request('[]'))).resolves.toEqual([]);
    await expect(read(request(''))).resolves.toEqual({});
  });

  it('refuses U+0000 in any string, and only there', async () => {
    await expect(read(request('{"a":{"b":["x\\u0000"]}}'))).rejects.toMatchObject({
      message: 'strings must not contain U+0000 (NUL)',
      status: 400,
    });
    await expect(read(request('{"a":"\\\\u0000"}'))).resolves.toEqual({ a: '\\u0000' });
  });

  it('words a top-level value other than an object or array as JSON.parse words a bad token', async () => {
    await expect(read(request('"x"'))).rejects.toThrow(`Unexpected token '"', ""x"" is not valid JSON`);
    await expect(read(request(' null'))).rejects.toThrow(`Unexpected token 'n', " null" is not valid JSON`);
    await expect(read(request('{"a":'))).rejects.toBeInstanceOf(SyntaxError);
  });

  it('answers 413 past the limit, 415 to a charset or encoding it cannot read, and inflates gzip', async () => {
    await expect(read(request(`{"a":"${'x'.repeat(2000)}"}`))).rejects.toMatchObject({ status: 413 });
    await expect(read(request('{}', { 'content-type': 'application/json; charset=latin1' }))).rejects.toEqual(
      new BodyError(415, 'unsupported charset "LATIN1"', 'charset.unsupported'),
    );
    await expect(read(request('{}', { 'content-encoding': 'compress' }))).rejects.toMatchObject({ status: 415 });
    const zipped = gzipSync('{"a":1}');
    await expect(read(request(zipped, { 'content-encoding': 'gzip' }))).resolves.toEqual({ a: 1 });
  });
});
