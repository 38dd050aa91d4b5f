import { randomUUID } from 'node:crypto';
import { NewEvent } from '@parley/event-store';

/** An event of any type for the event store's own tests: what it carries does not matter there. */
export const newEvent = (type = 'Something', data: unknown = {}): NewEvent => ({ id: randomUUID(), type, data });
