/**
 * Stoplight Prism as a validating proxy in front of a running API: an OpenAPI validator that
 * shares no code with the API. Every request sent to `base` is checked against the document,
 * forwarded to the API, and its answer checked against the document too; Prism reports what
 * departs in the `sl-violations` response header (a JSON list, each with a `location` that
 * starts with `request` or `response`) and, with `--errors false`, changes nothing else.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { projectRoot } from '../../libs/platform/src/project-root';
import { freePort, startProcess } from './stack';
import { waitFor } from './wait-for';

const ROOT = projectRoot(__dirname);
const PRISM_CLI = path.join(ROOT, 'node_modules/@stoplight/prism-cli/dist/index.js');
/** Prism cuts the header at about 8 KB and says so with this prefix. */
const TRUNCATED = 'Too many violations!';

/** Reads {documentFile, exchanges} on stdin, writes one list of violations per exchange. */
const VALIDATE_SCRIPT = `
const http = require('@stoplight/prism-http');
const route = require('@stoplight/prism-http/dist/router').default;
const { validateOutput } = require('@stoplight/prism-http/dist/validator');
let raw = '';
process.stdin.on('data', (d) => (raw += d));
process.stdin.on('end', async () => {
  const { documentFile, exchanges } = JSON.parse(raw);
  const resources = await http.getHttpOperationsFromSpec(documentFile);
  const severity = ['Error', 'Warning', 'Information', 'Hint'];
  const out = exchanges.map((x) => {
    const routed = route({ resources, input: { method: x.method, url: { path: x.path, query: {} }, headers: {} } });
    if (routed._tag === 'Left') return [{ location: ['request'], severity: 'Error', message: 'no operation: ' + routed.left.message }];
    const checked = validateOutput({ resource: routed.right, element: { statusCode: x.status, headers: x.headers, body: x.body } });
    if (checked._tag === 'Right') return [];
    return checked.left.map((d) => ({
      location: ['response'].concat(d.path || []),
      severity: severity[d.severity] || String(d.severity),
      code: d.code,
      message: d.message,
    }));
  });
  process.stdout.write(JSON.stringify(out));
});
`;

function runNode(script: string, stdin: string): Promise<{ stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', script], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve({ stdout }) : reject(new Error(`prism validator exited ${code}: ${stderr}`)),
    );
    child.stdin.end(stdin);
  });
}

export interface Violation {
  /** e.g. ['request', 'header', 'if-match'] or ['response', 'body', 'items'] */
  location: string[];
  /** Error, Warning, Information or Hint */
  severity: string;
  code?: string | number;
  message: string;
}

export interface PrismProxy {
  /** the proxy's origin: send requests here instead of to the API */
  base: string;
  /** the document Prism validates against */
  documentFile: string;
  /** Prism's own log (its stdout and stderr), for when it misbehaves */
  output(): string;
  /**
   * Prism's own router and response validator, for the few answers its proxy cannot carry (a
   * stream that never ends, a body it cannot parse as JSON): the same checks and messages. They
   * run in a child process (Prism's modules do not load under Jest), all at once.
   */
  validateResponses(
    exchanges: Array<{
      request: { method: string; url: string };
      response: { status: number; headers: Headers; body: unknown };
    }>,
  ): Promise<Violation[][]>;
  stop(): Promise<void>;
}

/** The violations Prism reported for one response (none when it has no `sl-violations` header). */
export function violationsOf(headers: Headers): Violation[] {
  const raw = headers.get('sl-violations');
  if (!raw) return [];
  if (raw.startsWith(TRUNCATED)) {
    return [{ location: ['response'], severity: 'Error', message: raw.slice(0, 2_000) }];
  }
  try {
    return JSON.parse(raw) as Violation[];
  } catch {
    return [{ location: ['response'], severity: 'Error', message: `unreadable sl-violations header: ${raw}` }];
  }
}

/** The OpenAPI document the API serves at /docs-json, parsed. */
export async function servedDocument(apiBase: string): Promise<any> {
  const r = await fetch(`${apiBase}/docs-json`);
  if (!r.ok) throw new Error(`GET ${apiBase}/docs-json answered ${r.status}`);
  return r.json();
}

/**
 * Starts `prism proxy <document> <upstream>` on a free port with the given document (written to a
 * temp file) and waits until it forwards requests.
 */
export async function startPrism(document: object, upstream: string): Promise<PrismProxy> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'parley-prism-'));
  const documentFile = path.join(dir, 'openapi.json');
  await writeFile(documentFile, JSON.stringify(document, null, 2));
  const port = await freePort();
  const args = [
    PRISM_CLI,
    'proxy',
    documentFile,
    upstream,
    '--host',
    '127.0.0.1',
    '--port',
    String(port),
    '--errors=false', // report violations in sl-violations, never replace the API's answer
    '--validate-request=true',
    '--cors=false',
    '--multiprocess=false',
    '--verboseLevel',
    'warn',
  ];
  const prism = startProcess('prism', args, { NODE_ENV: 'test', FORCE_COLOR: '0' });
  const base = `http://127.0.0.1:${port}`;
  const stop = async () => {
    await prism.kill();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await waitFor(
      'prism proxy to forward /healthz',
      async () => {
        if (prism.child.exitCode !== null)
          throw new Error(`prism exited (${prism.child.exitCode}):\n${prism.output()}`);
        return (await fetch(`${base}/healthz`).catch(() => undefined))?.ok;
      },
      30_000,
      100,
    );
  } catch (e) {
    await stop();
    throw e;
  }
  const validateResponses: PrismProxy['validateResponses'] = async (exchanges) => {
    if (exchanges.length === 0) return [];
    const input = JSON.stringify({
      documentFile,
      exchanges: exchanges.map(({ request, response }) => ({
        method: request.method.toLowerCase(),
        path: new URL(request.url, 'http://localhost').pathname,
        status: response.status,
        headers: Object.fromEntries(response.headers.entries()),
        body: response.body,
      })),
    });
    const { stdout } = await runNode(VALIDATE_SCRIPT, input);
    return JSON.parse(stdout) as Violation[][];
  };
  return { base, documentFile, output: prism.output, stop, validateResponses };
}
