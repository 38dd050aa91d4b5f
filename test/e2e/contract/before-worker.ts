import { randomUUID } from 'node:crypto';
import { bookJson, ContractHarness } from '../../support/contract-harness';
import { tinyBookMarkdown } from '../../support/factories/books';

/** No worker yet: books stay ingesting and turns running, so the busy and not-ready answers are certain. */
export function describeBeforeTheWorker(h: ContractHarness): void {
  describe('before the worker starts (books ingesting, turns running)', () => {
    it('uploads books as JSON and multipart; a third one at once is 429 book_ingest_busy', async () => {
      const created = await h.typed('upload a book (JSON)', 202, (c) =>
        c.POST('/v1/books', { body: bookJson() as any }),
      );
      h.bookId = created.body?.id;
      expect(h.bookId).toBeTruthy();
      const form = new FormData();
      form.append('title', 'Spare');
      form.append('file', new Blob([tinyBookMarkdown()], { type: 'text/markdown' }), 'spare.md');
      h.spareBookId = (
        await h.send({ label: 'upload a book (multipart)', expect: 202 }, 'POST', '/v1/books', { body: form })
      ).body?.id;
      expect(h.spareBookId).toBeTruthy();
      await h.send({ label: 'upload a third book while two ingest', expect: 429 }, 'POST', '/v1/books', {
        body: bookJson('Busy'),
      });
    });

    it('answers 409 book_not_ready for a book still ingesting', async () => {
      await h.send(
        { label: 'search a book still ingesting', expect: 409 },
        'GET',
        `/v1/books/${h.bookId}/search?q=lamp`,
      );
      await h.send(
        { label: 'start a conversation about a book still ingesting', expect: 409 },
        'POST',
        '/v1/conversations',
        {
          body: { bookId: h.bookId },
        },
      );
    });

    it('answers 409 turn_in_progress to ?multitask=reject while a turn runs, then cancels it', async () => {
      h.pendingConversation = (
        await h.typed('start a conversation (no book)', 201, (c) =>
          c.POST('/v1/conversations', { body: { title: 'Pending' } }),
        )
      ).body?.id;
      const posted = await h.send(
        { label: 'post a message (its turn stays running: no worker)', expect: 202 },
        'POST',
        `/v1/conversations/${h.pendingConversation}/messages`,
        { body: { content: 'Who keeps the lighthouse?' } },
      );
      h.pendingTurn = posted.body?.turnId;
      await h.send(
        { label: 'post with ?multitask=reject while a turn runs', expect: 409 },
        'POST',
        `/v1/conversations/${h.pendingConversation}/messages?multitask=reject`,
        { body: { content: 'And the lamp?' } },
      );
      const cancelled = await h.typed('cancel a running turn', 202, (c) =>
        c.POST('/v1/conversations/{id}/turns/{turnId}/cancel', {
          params: { path: { id: h.pendingConversation, turnId: h.pendingTurn } },
        }),
      );
      expect(cancelled.body).toEqual({ turnId: h.pendingTurn, cancelled: true });
      await h.typed('cancel a turn that already ended', 202, (c) =>
        c.POST('/v1/conversations/{id}/turns/{turnId}/cancel', {
          params: { path: { id: h.pendingConversation, turnId: h.pendingTurn } },
        }),
      );
      await h.send(
        { label: 'cancel an unknown turn', expect: 404, kind: 'opaque' },
        'POST',
        `/v1/conversations/${h.pendingConversation}/turns/${randomUUID()}/cancel`,
      );
    });
  });
}
