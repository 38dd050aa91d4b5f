/**
 * How a test asks a fake model (Anthropic's or OpenAI's) to call an offered tool by name: the
 * question holds `CALL:<tool name>`, then optionally its input as a JSON object, e.g.
 * `What is the weather? CALL:weather__forecast {"city": "Lisbon"}`. Several directives are called
 * one after another, one per model call; once each was called, the fake answers quoting what the
 * tools said. A directive naming a tool that is not offered gets an answer saying so.
 */

export interface ToolDirective {
  name: string;
  input: Record<string, unknown>;
}

const DIRECTIVE = /CALL:([a-zA-Z0-9_-]{1,64})/g;

/** The directives in `question`, in order. */
export function toolDirectivesOf(question: string): ToolDirective[] {
  return [...question.matchAll(DIRECTIVE)].map((m) => ({
    name: m[1],
    input: jsonObjectAt(question, m.index + m[0].length) ?? {},
  }));
}

/** What the fake says next in a turn of `question`, given the tools offered and the calls already made. */
export function nextDirectiveStep(
  question: string,
  offered: string[],
  called: number,
  results: string[],
): { call: ToolDirective } | { text: string } | null {
  const directives = toolDirectivesOf(question);
  if (directives.length === 0) return null;
  const next = directives[called];
  if (next && offered.length > 0) {
    if (offered.includes(next.name)) return { call: next };
    return { text: `I cannot call ${next.name}: no tool of that name is offered.` };
  }
  return { text: `The tools said: ${results.map((r) => `"${quote(r)}"`).join(' ')}` };
}

function quote(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 160 ? `${flat.slice(0, 159)}…` : flat;
}

/** The JSON object starting at `from` (after spaces), or undefined: braces counted outside strings. */
function jsonObjectAt(text: string, from: number): Record<string, unknown> | undefined {
  const start = text.slice(from).search(/\S/);
  if (start < 0 || text[from + start] !== '{') return undefined;
  let depth = 0;
  let inString = false;
  for (let i = from + start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{') depth++;
    else if (c === '}' && --depth === 0) {
      try {
        return JSON.parse(text.slice(from + start, i + 1));
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}
