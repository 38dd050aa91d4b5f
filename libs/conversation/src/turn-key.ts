/**
 * A turn's key across conversations: turn ids are unique within their conversation only (a fork
 * copies them), so whatever keeps turns of many conversations in one map keys them by both.
 */
export const turnKey = (streamId: string, turnId: string | undefined): string => `${streamId}/${turnId}`;

/** The turn an event belongs to, if it belongs to one (its data has a turnId). */
export const turnIdOf = (event: { data: unknown }): string | undefined =>
  (event.data as { turnId?: string } | null)?.turnId;

/** The key of the turn a stored event belongs to. */
export const turnKeyOf = (event: { streamId: string; data: unknown }): string =>
  turnKey(event.streamId, turnIdOf(event));
