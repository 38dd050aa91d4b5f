/**
 * The service processes this Jest worker started (test/support/stack.ts), so that a wait that
 * times out can say what they last printed and whether they are still running: a book that never
 * becomes ready reads differently when the worker died at boot than when it is alive and silent.
 */
export interface WatchedProcess {
  name: string;
  state(): string;
  output(): string;
}

const watched = new Set<WatchedProcess>();

export function watchProcess(p: WatchedProcess): () => void {
  watched.add(p);
  return () => watched.delete(p);
}

/** The state and the last lines of every process started and not yet stopped; '' when none. */
export function processReport(tailChars = 1_500): string {
  return [...watched]
    .map((p) => {
      const tail = p.output().slice(-tailChars).trimEnd();
      return `--- ${p.name} (${p.state()})${tail ? `, last output:\n${tail}` : ', no output'}`;
    })
    .join('\n');
}
