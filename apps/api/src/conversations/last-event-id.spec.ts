import { ProblemException } from '../http/problem.exception';
import { parseLastEventId } from './last-event-id';

describe(parseLastEventId.name, () => {
  const refusal = (header: string | string[]): unknown => {
    try {
      return parseLastEventId(header);
    } catch (e) {
      return e;
    }
  };

  it('reads a stream version; an absent header is no version', () => {
    expect(parseLastEventId('0')).toBe(0);
    expect(parseLastEventId('42')).toBe(42);
    expect(parseLastEventId(String(2 ** 31 - 1))).toBe(2 ** 31 - 1);
    expect(parseLastEventId(undefined)).toBeUndefined();
  });

  it.each([['-1'], ['1.5'], [' 7'], [''], ['abc'], [String(2 ** 31)], ['12345678901'], [['7']]])(
    'refuses %j as a 400 on the Last-Event-ID header',
    (header) => {
      const error = refusal(header);
      expect(error).toBeInstanceOf(ProblemException);
      expect(error).toMatchObject({ code: 'validation_failed', extras: { errors: [{ field: 'Last-Event-ID' }] } });
    },
  );
});
