import { redactQuery, redactUrl } from './redact-url';

describe(redactUrl.name, () => {
  it.each([
    ['/s?access_token=abc.def.ghi', '/s?access_token=[REDACTED]'],
    ['/s?after=1&access_token=abc&x=2', '/s?after=1&access_token=[REDACTED]&x=2'],
    ['/s?access%5Ftoken=abc', '/s?access%5Ftoken=[REDACTED]'],
    ['/s?access%5ftoken=abc', '/s?access%5ftoken=[REDACTED]'],
    ['/s?access_token[]=abc', '/s?access_token[]=[REDACTED]'],
    ['/s?access_token=a&access_token=b', '/s?access_token=[REDACTED]&access_token=[REDACTED]'],
    ['/s?access_token', '/s?access_token=[REDACTED]'],
    ['/s?%E0%A4%A=1&access_token=abc', '/s?%E0%A4%A=1&access_token=[REDACTED]'],
  ])('%s → %s', (url, expected) => {
    expect(redactUrl(url)).toBe(expected);
  });

  it('leaves other parameters and URLs without a query alone', () => {
    expect(redactUrl('/v1/conversations')).toBe('/v1/conversations');
    expect(redactUrl('/s?my_access_token=1&access_tokens=2')).toBe('/s?my_access_token=1&access_tokens=2');
  });
});

describe(redactQuery.name, () => {
  it('replaces the values of access_token parameters only', () => {
    expect(redactQuery({ after: '1', access_token: 'abc', 'access_token[]': ['x'] })).toEqual({
      after: '1',
      access_token: '[REDACTED]',
      'access_token[]': '[REDACTED]',
    });
    expect(redactQuery(undefined)).toBeUndefined();
  });
});
