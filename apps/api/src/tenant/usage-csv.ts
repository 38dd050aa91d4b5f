import { ModelUsage } from '@parley/read-models';

const COLUMNS: Array<keyof ModelUsage> = [
  'turns',
  'toolCalls',
  'failures',
  'inputTokens',
  'outputTokens',
  'cacheReadInputTokens',
  'cacheCreationInputTokens',
  'costUsd',
  'cacheHitRate',
];

/**
 * A usage report's groups as CSV (RFC 4180): a header, then a line per group with the same
 * figures as the JSON. A key a spreadsheet would run as a formula (=, +, -, @) is prefixed with '.
 */
export function usageCsv(keyName: string, groups: Array<ModelUsage & { key: string }>): string {
  const lines = [[keyName, ...COLUMNS].join(',')];
  for (const g of groups) lines.push([field(g.key), ...COLUMNS.map((c) => String(g[c]))].join(','));
  return lines.join('\r\n') + '\r\n';
}

function field(value: string): string {
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}
