import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '@parley/platform';

/**
 * The libs in layers, lowest first. A lib imports only libs of lower layers, so a lower one never
 * pulls in what is built on it: platform (Postgres pools, Redis, logging, queues) knows nothing of
 * events, and the event store nothing of conversations.
 */
const LAYERS: readonly (readonly string[])[] = [
  ['config'],
  ['platform'],
  ['event-store'],
  ['conversation'],
  ['read-models', 'agent', 'api-client', 'webhooks'],
  ['books'],
  ['erasure'],
];

const libsDir = path.join(projectRoot(), 'libs');
const layerOf = (lib: string) => LAYERS.findIndex((layer) => layer.includes(lib));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** Module specifiers of `import … from`, `export … from`, `import '…'`, `import('…')` and `require('…')`. */
function specifiers(source: string): string[] {
  const found: string[] = [];
  const pattern = /(?:\bfrom\s*|\bimport\s*\(?\s*|\brequire\s*\(\s*)['"]([^'"]+)['"]/g;
  for (const m of source.matchAll(pattern)) found.push(m[1]);
  return found;
}

/** The other lib a specifier of a file in `lib` names, by alias (@parley/x) or by a relative path into libs/x. */
function libNamed(lib: string, file: string, specifier: string): string | null {
  const alias = /^@parley\/([a-z-]+)/.exec(specifier);
  if (alias) return alias[1] === lib ? null : alias[1];
  if (!specifier.startsWith('.')) return null;
  const relative = path.relative(libsDir, path.resolve(path.dirname(file), specifier));
  if (relative.startsWith('..')) return null; // outside libs/ (test/support, the repo root)
  const target = relative.split(path.sep)[0];
  return target === lib ? null : target;
}

/** Each lib's imports of other libs, as `file → lib`. */
function crossLibImports(): { lib: string; file: string; imports: string }[] {
  const libs = readdirSync(libsDir, { withFileTypes: true }).filter((e) => e.isDirectory());
  return libs.flatMap(({ name: lib }) =>
    sourceFiles(path.join(libsDir, lib, 'src')).flatMap((file) =>
      specifiers(readFileSync(file, 'utf8')).flatMap((s) => {
        const imports = libNamed(lib, file, s);
        return imports ? [{ lib, file: path.relative(projectRoot(), file), imports }] : [];
      }),
    ),
  );
}

describe('lib layers', () => {
  const imports = crossLibImports();

  it('places every lib in a layer', () => {
    const libs = readdirSync(libsDir, { withFileTypes: true }).filter((e) => e.isDirectory());
    expect(libs.map((e) => e.name).filter((lib) => layerOf(lib) < 0)).toEqual([]);
  });

  it('sees the imports it judges, by alias and by relative path', () => {
    expect(imports).toContainEqual({ lib: 'books', file: 'libs/books/src/search-book.tool.ts', imports: 'agent' });
    expect(imports).toContainEqual({
      lib: 'api-client',
      file: 'libs/api-client/src/events.spec.ts',
      imports: 'conversation',
    });
  });

  it('has each lib import only libs of lower layers', () => {
    const upward = imports.filter((i) => layerOf(i.imports) >= layerOf(i.lib));
    expect(upward.map((i) => `${i.file} imports ${i.imports}`)).toEqual([]);
  });

  it('keeps platform at the bottom: it imports no lib but config', () => {
    const fromPlatform = imports.filter((i) => i.lib === 'platform' && i.imports !== 'config');
    expect(fromPlatform.map((i) => `${i.file} imports ${i.imports}`)).toEqual([]);
  });
});
