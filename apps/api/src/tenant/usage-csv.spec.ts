import { usageCsv } from './usage-csv';

const figures = {
  turns: 2,
  toolCalls: 1,
  failures: 0,
  inputTokens: 10,
  outputTokens: 20,
  cacheReadInputTokens: 5,
  cacheCreationInputTokens: 0,
  costUsd: 0.012345,
  cacheHitRate: 0.3333,
};

describe(usageCsv.name, () => {
  it('writes a header and a line per group with the same figures', () => {
    expect(usageCsv('reader', [{ key: 'ann', ...figures }])).toBe(
      'reader,turns,toolCalls,failures,inputTokens,outputTokens,cacheReadInputTokens,cacheCreationInputTokens,costUsd,cacheHitRate\r\n' +
        'ann,2,1,0,10,20,5,0,0.012345,0.3333\r\n',
    );
  });

  it('quotes keys with commas or quotes, and keeps a spreadsheet from running one as a formula', () => {
    const lines = usageCsv('reader', [
      { key: 'a,"b"', ...figures },
      { key: '=HYPERLINK("x")', ...figures },
    ]).split('\r\n');
    expect(lines[1].startsWith('"a,""b""",')).toBe(true);
    expect(lines[2].startsWith(`"'=HYPERLINK(""x"")",`)).toBe(true);
  });
});
