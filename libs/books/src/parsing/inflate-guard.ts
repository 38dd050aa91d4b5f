import { createInflate } from 'node:zlib';

/** How far back from `stream` a stream's dictionary may start. */
const MAX_DICT_BYTES = 4096;
/**
 * The inflater's output chunk: zlib's default (16 KiB) makes a 20 MB count 1,280 round trips
 * through the thread pool, several times the inflating itself; counted chunks are dropped at once.
 */
const COUNT_CHUNK_BYTES = 256 * 1024;

/**
 * The bytes a PDF's Flate-compressed streams inflate to, counted without keeping them, stopping
 * once `bound` is passed. pdf.js inflates a content stream whole into one growing buffer (off the
 * V8 heap, so no heap limit sees it): a 1 MB file can hold a stream of 1 GB of spaces. Counting
 * first refuses such a bomb in a fraction of a second, before pdf.js allocates anything.
 * Image XObjects are skipped (text extraction never decodes them, and flat scans compress
 * extremely well). Malformed streams count what inflates before the error; a bomb this misses
 * (nested filters, LZW) still meets the parser process's memory watchdog.
 */
export async function inflatedStreamBytes(pdf: Buffer, bound: number): Promise<number> {
  let total = 0;
  for (let at = pdf.indexOf('stream', 0, 'latin1'); at >= 0; at = pdf.indexOf('stream', at + 6, 'latin1')) {
    if (at >= 3 && pdf.toString('latin1', at - 3, at) === 'end') continue; // the `endstream` keyword
    const dict = pdf.toString('latin1', Math.max(0, at - MAX_DICT_BYTES), at);
    const open = dict.lastIndexOf('obj');
    const own = open >= 0 ? dict.slice(open) : dict;
    if (!/\/FlateDecode|\/Fl\b/.test(own) || /\/Subtype\s*\/Image/.test(own)) continue;
    let start = at + 6;
    if (pdf[start] === 0x0d) start++;
    if (pdf[start] === 0x0a) start++;
    let end = pdf.indexOf('endstream', start, 'latin1');
    if (end < 0) end = pdf.length;
    total += await inflatedSize(pdf.subarray(start, end), bound - total);
    if (total > bound) return total;
    at = end;
  }
  return total;
}

/** The inflated size of one zlib stream, counted chunk by chunk; stops just past `limit`. */
function inflatedSize(data: Buffer, limit: number): Promise<number> {
  return new Promise((resolve) => {
    const z = createInflate({ chunkSize: COUNT_CHUNK_BYTES });
    let n = 0;
    const done = () => resolve(n);
    z.on('data', (chunk: Buffer) => {
      n += chunk.length;
      if (n > limit) z.destroy();
    });
    z.once('end', done);
    z.once('close', done);
    z.once('error', done); // a damaged stream: what inflated before the damage counts
    z.end(data);
  });
}
