/**
 * Summarises a V8 `.cpuprofile` (what `node --cpu-prof` writes): self time by where the code
 * lives (a package under node_modules, Parley's own dist/, Node's internals, native and GC) and
 * the functions with the most self time. Enough to see where a turn's CPU goes without DevTools.
 */
interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** Where a frame's code lives: `pkg:<name>`, `parley:<dir>`, `node:<module>` or a V8 pseudo-frame. */
export function placeOf(url: string, functionName: string): string {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return `pkg:${pkg[1]}`;
  if (url.startsWith('node:')) return url;
  const own = /\/dist\/(apps\/[^/]+|libs\/[^/]+)/.exec(url);
  if (own) return `parley:${own[1]}`;
  return url;
}

/**
 * `window` (µs on the profile's clock, which is the monotonic clock of `process.hrtime`) keeps
 * only the samples taken within it.
 */
export function summariseCpuProfile(profile: CpuProfile, top = 25, window?: { fromUs: number; toUs: number }): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parentOf = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parentOf.set(c, n.id);
  const selfUs = new Map<number, number>();
  let at = profile.startTime;
  profile.samples.forEach((id, i) => {
    at += profile.timeDeltas[i] ?? 0;
    if (window && (at < window.fromUs || at > window.toUs)) return;
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  const idle = [...selfUs].filter(([id]) => byId.get(id)?.callFrame.functionName === '(idle)');
  const idleUs = idle.reduce((s, [, us]) => s + us, 0);
  const totalUs = window ? window.toUs - window.fromUs : profile.endTime - profile.startTime;
  const busyUs = [...selfUs.values()].reduce((a, b) => a + b, 0) - idleUs;
  const byPlace = new Map<string, number>();
  const byFunction = new Map<string, number>();
  // a system call or a Node internal is charged to the nearest package (or Parley module) up its stack
  const byOwner = new Map<string, number>();
  const ownerOf = (id: number): string => {
    for (let n: number | undefined = id; n !== undefined; n = parentOf.get(n)) {
      const f = byId.get(n)!.callFrame;
      const place = placeOf(f.url, f.functionName);
      if (place.startsWith('pkg:') || place.startsWith('parley:')) return place;
    }
    const f = byId.get(id)!.callFrame;
    return placeOf(f.url, f.functionName);
  };
  for (const [id, us] of selfUs) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    if (functionName === '(idle)') continue;
    const place = placeOf(url, functionName);
    byPlace.set(place, (byPlace.get(place) ?? 0) + us);
    const key = `${functionName || '(anonymous)'} ${place}${url ? `:${lineNumber + 1}` : ''}`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + us);
    const owner = ownerOf(id);
    byOwner.set(owner, (byOwner.get(owner) ?? 0) + us);
  }
  const ms = (us: number) => (us / 1000).toFixed(0).padStart(7);
  const share = (us: number) => `${((100 * us) / busyUs).toFixed(1).padStart(5)} %`;
  const rows = (m: Map<string, number>, n: number) =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([k, us]) => `${ms(us)} ms ${share(us)}  ${k}`);
  return [
    `${window ? 'window' : 'profile'} ${ms(totalUs)} ms, busy ${ms(busyUs).trim()} ms (idle ${ms(idleUs).trim()} ms)`,
    '',
    'self time by place:',
    ...rows(byPlace, top),
    '',
    'self time charged to the nearest package up the stack (system calls included):',
    ...rows(byOwner, top),
    '',
    'self time by function:',
    ...rows(byFunction, top),
  ].join('\n');
}
