import { readFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '@parley/platform';

export type PromptName =
  | 'conversation_system_prompt'
  | 'reformulation_prompt'
  | 'hyde_passage'
  | 'always_retrieve_answer'
  | 'history_summary'
  | 'whole_book_system_prompt';

const cache = new Map<PromptName, string>();

/** A Markdown template from prompts/, with {{name}} placeholders filled in. Unknown names are an error. */
export function renderPrompt(name: PromptName, vars: Record<string, string>): string {
  let template = cache.get(name);
  if (template === undefined) {
    template = readFileSync(path.join(projectRoot(), 'prompts', `${name}.md`), 'utf8');
    cache.set(name, template);
  }
  return template
    .replace(/\{\{(\w+)\}\}/g, (_, key: string) => {
      if (!(key in vars)) throw new Error(`prompt ${name} needs {{${key}}}`);
      return vars[key];
    })
    .trim();
}
