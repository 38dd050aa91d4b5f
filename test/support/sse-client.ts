import { EventSource } from 'eventsource';
import { CONVERSATION_EVENT_TYPES } from '../../libs/conversation/src/events';
import { waitFor } from './wait-for';

export const DURABLE_EVENT_TYPES: readonly string[] = CONVERSATION_EVENT_TYPES;

export interface Frame {
  event: string;
  id: string | undefined;
  data: any;
}

/**
 * A real SSE client (the `eventsource` package, as browsers behave): it reconnects by itself
 * and sends Last-Event-ID. Collects every frame it receives.
 */
export function openStream(url: string, opts: { token?: string; headers?: Record<string, string> } = {}) {
  const frames: Frame[] = [];
  let opens = 0;
  const errors: Array<{ code?: number; message?: string }> = [];
  const es = new EventSource(url, {
    fetch: (input, init) =>
      fetch(input, {
        ...init,
        headers: {
          ...(init?.headers as Record<string, string>),
          ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}),
          ...opts.headers,
        },
      }),
  });
  es.addEventListener('open', () => opens++);
  es.addEventListener('error', (e) => errors.push({ code: (e as any).code, message: (e as any).message }));
  for (const type of [...DURABLE_EVENT_TYPES, 'AssistantTextDelta']) {
    es.addEventListener(type, (e: MessageEvent) => {
      frames.push({ event: type, id: e.lastEventId || undefined, data: JSON.parse(e.data) });
    });
  }
  const durable = () => frames.filter((f) => f.event !== 'AssistantTextDelta');
  return {
    es,
    frames,
    durable,
    errors,
    get opens() {
      return opens;
    },
    until: (what: string, pred: (frames: Frame[]) => boolean, ms = 15_000) => waitFor(what, () => pred(frames), ms),
    close: () => es.close(),
  };
}

/**
 * A client that read `first` and left comes back on `base` (another API, say) with Last-Event-ID
 * and reads up to version `total`: the versions both sessions received, in order, for a test to
 * compare with 1..total (nothing lost, nothing repeated).
 */
export async function resumeUntil(
  first: ReturnType<typeof openStream>,
  base: string,
  conversationId: string,
  token: string,
  total: number,
): Promise<number[]> {
  const lastSeen = first.durable().at(-1)?.id ?? '0';
  const resumed = openStream(`${base}/v1/conversations/${conversationId}/stream`, {
    token,
    headers: { 'last-event-id': lastSeen },
  });
  try {
    if (Number(lastSeen) < total) {
      await resumed.until('the rest of the log', () => resumed.durable().some((f) => Number(f.id) === total));
    }
  } finally {
    resumed.close();
  }
  return [...first.durable(), ...resumed.durable()].map((f) => Number(f.id));
}
