import type { ServerResponse } from 'node:http';

/**
 * A signal that aborts when the client goes before the response has ended (the socket closed,
 * the fetch aborted). The response's `close`, not the request's: a request's `close` fires once
 * its body has been read.
 */
export function clientGone(res: ServerResponse): AbortSignal {
  const controller = new AbortController();
  const onClose = () => {
    if (!res.writableEnded) controller.abort(new Error('the client went away'));
  };
  if (res.destroyed) onClose();
  else res.once('close', onClose);
  return controller.signal;
}
