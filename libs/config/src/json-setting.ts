import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { ConfigError } from './env';

/**
 * A setting that holds a JSON object or the path of a file holding one (LLM_PRICES,
 * MCP_TOOL_SERVERS), checked against `schema`. Anything malformed stops boot with lines that name
 * the variable and the field, so nothing runs on a table the operator did not mean.
 */
export function parseJsonSetting<S extends z.ZodType>(variable: string, raw: string, schema: S): z.infer<S> {
  const text = raw.trim().startsWith('{') ? raw : readSettingFile(variable, raw.trim());
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new ConfigError(`Invalid environment:\n  ${variable}: not JSON (${(e as Error).message})`);
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${[variable, ...i.path].join('.')}: ${i.message}`);
    throw new ConfigError(`Invalid environment:\n${lines.join('\n')}`);
  }
  return parsed.data;
}

function readSettingFile(variable: string, path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (e) {
    throw new ConfigError(
      `Invalid environment:\n  ${variable}: neither a JSON object nor a readable file (${(e as Error).message})`,
    );
  }
}
