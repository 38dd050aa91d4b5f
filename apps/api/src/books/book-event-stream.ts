import { Inject, Injectable } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Book, BookQueries, BookReader } from '@parley/books';
import { AppConfig, CONFIG } from '@parley/config';

/** How often the book's row is read while it ingests (the worker writes progress at most every 250 ms). */
const POLL_MS = 250;

/**
 * GET /books/:id/events: the book's ingestion as SSE. Polls the row, which any replica can
 * read, so a client on one API replica follows a worker anywhere; ingestion is minutes at most,
 * so the polling costs little. `progress` frames on every change, then `ready` or `failed`.
 */
@Injectable()
export class BookEventStream {
  constructor(
    private readonly books: BookQueries,
    @Inject(CONFIG) private readonly config: AppConfig,
  ) {}

  /** Writes to the raw response (the caller has taken it from the framework). */
  async serve(reader: BookReader, bookId: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    res.flushHeaders();
    res.write(`retry: ${this.config.sse.retryMs}\n\n`);
    let closed = false;
    req.on('close', () => (closed = true));
    let last = '';
    let lastPing = Date.now();
    while (!closed) {
      let book: Book;
      try {
        book = await this.books.get(reader, bookId);
      } catch {
        break; // deleted meanwhile (or the database is away): the client may reconnect
      }
      const frame = JSON.stringify(book);
      const event = book.status === 'ingesting' ? 'progress' : book.status;
      if (frame !== last || event !== 'progress') res.write(`event: ${event}\ndata: ${frame}\n\n`);
      last = frame;
      if (event !== 'progress') break;
      if (Date.now() - lastPing > this.config.sse.pingMs) {
        res.write(': ping\n\n');
        lastPing = Date.now();
      }
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
    res.end();
  }
}
