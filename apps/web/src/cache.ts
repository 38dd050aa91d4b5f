/**
 * The events of the conversations seen in this tab, kept in sessionStorage so that a reload
 * shows them at once and the stream resumes after the last one (`?after=`, as Last-Event-ID
 * does on a reconnect) instead of replaying everything. Nothing breaks without it.
 */
import type { EventEnvelope } from './model';

const key = (id: string) => `parley:events:${id}`;

export function loadCachedEvents(id: string): EventEnvelope[] {
  try {
    const raw = sessionStorage.getItem(key(id));
    const events = raw ? (JSON.parse(raw) as EventEnvelope[]) : [];
    return Array.isArray(events) ? events.filter((e) => e && e.conversationId === id) : [];
  } catch {
    return [];
  }
}

export function saveCachedEvents(id: string, events: EventEnvelope[]): void {
  try {
    sessionStorage.setItem(key(id), JSON.stringify(events));
  } catch {
    dropCachedEvents(id); // full: the stream replays from the start next time
  }
}

export function dropCachedEvents(id: string): void {
  try {
    sessionStorage.removeItem(key(id));
  } catch {
    // storage unavailable
  }
}
