/** Opaque page cursors: base64url JSON, checked on the way back in. */
export function encodeCursor(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

export class InvalidCursorError extends Error {
  constructor() {
    super('cursor is not valid');
  }
}

export function decodeCursor<T>(cursor: string, isValid: (v: unknown) => v is T): T {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw new InvalidCursorError();
  }
  if (!isValid(value)) throw new InvalidCursorError();
  return value;
}
