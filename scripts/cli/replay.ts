/**
 * `replay <conversationId> [--json]`: the conversation's event log, as people read it (who said
 * what, which tool ran with what, what each turn cost), or with --json one event per line.
 */
import type { Api } from './api';
import { eventLines } from './format';
import { allEvents } from './resources';

export async function replay(api: Api, id: string, json: boolean): Promise<void> {
  const events = await allEvents(api, id);
  const numbers = new Map<string, number>();
  for (const e of events) {
    if (json) console.log(JSON.stringify(e));
    else for (const line of eventLines(e, numbers)) console.log(line);
  }
}
