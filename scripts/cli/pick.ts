/** A numbered choice on the terminal: 1..n, re-asked until valid; null when the user leaves. */
import type { Terminal } from './terminal';

export async function pick(term: Terminal, heading: string, options: string[], first = 1): Promise<number | null> {
  term.write(`${heading}\n`);
  options.forEach((o, i) => term.write(`  ${String(i + first).padStart(2)}) ${o}\n`));
  for (;;) {
    const answer = await term.ask(`choose ${first}-${options.length - 1 + first}: `);
    if (answer === null) return null;
    const n = Number(answer.trim());
    if (Number.isInteger(n) && n >= first && n < options.length + first) return n - first;
    if (['q', 'quit', 'exit'].includes(answer.trim())) return null;
  }
}
