/**
 * A folded state as text and back, Dates and Maps included (JSON alone turns a Date into a string
 * and a Map into `{}`). The markers are single-key objects whose key no event data uses.
 */
const DATE = '__parley_date';
const MAP = '__parley_map';

export function encodeState(state: unknown): string {
  return JSON.stringify(state, function (this: Record<string, unknown>, key: string, value: unknown) {
    const raw = this[key];
    if (raw instanceof Date) return { [DATE]: raw.toISOString() };
    if (raw instanceof Map) return { [MAP]: [...raw] };
    if (raw instanceof Set) throw new TypeError(`a Set at "${key}" cannot be kept in a snapshot`);
    return value;
  });
}

export function decodeState<S>(text: string): S {
  return JSON.parse(text, (_key, value: unknown) => {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
    const keys = Object.keys(value);
    if (keys.length !== 1) return value;
    if (keys[0] === DATE) return new Date((value as Record<string, string>)[DATE]);
    if (keys[0] === MAP) return new Map((value as Record<string, [unknown, unknown][]>)[MAP]);
    return value;
  }) as S;
}
