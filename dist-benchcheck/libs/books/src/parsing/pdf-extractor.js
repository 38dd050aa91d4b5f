"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.PdfReadError = void 0;
exports.extractPdfItems = extractPdfItems;
exports.pdfItemsToLines = pdfItemsToLines;
const node_worker_threads_1 = require("node:worker_threads");
class PdfReadError extends Error {
    constructor(reason, message) {
        super(message);
        this.reason = reason;
        this.name = 'PdfReadError';
    }
}
exports.PdfReadError = PdfReadError;
const DEFAULT_TIMEOUT_MS = 120_000;
/**
 * pdf.js (`pdfjs-dist/legacy/build/pdf.mjs`) is ESM-only, so it is loaded with a real dynamic
 * `import()` inside a worker thread: that works from CommonJS (the compiled app) and from test
 * runners alike, keeps a long parse off the event loop, and lets a runaway file be cut off.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { pathToFileURL } = require('node:url');
(async () => {
  const pdfjs = await import(pathToFileURL(workerData.pdfjsPath).href);
  const doc = await pdfjs.getDocument({
    data: workerData.data, verbosity: 0, isEvalSupported: false, useSystemFonts: false, disableFontFace: true,
  }).promise;
  const pages = [];
  for (let p = 1; p <= doc.numPages; p++) {
    const page = await doc.getPage(p);
    const content = await page.getTextContent();
    pages.push(content.items.filter((i) => 'str' in i).map((i) => [i.str, !!i.hasEOL, i.transform[4], i.transform[5], i.height]));
    page.cleanup();
  }
  await doc.destroy();
  parentPort.postMessage({ ok: true, pages });
})().catch((e) => parentPort.postMessage({ ok: false, name: (e && e.name) || 'Error', message: String((e && e.message) || e) }));
`;
/** The text runs of every page of a PDF, in page order. */
function extractPdfItems(pdf, timeoutMs = DEFAULT_TIMEOUT_MS) {
    const data = new Uint8Array(pdf); // a private copy: pdf.js detaches the buffer it is given
    const worker = new node_worker_threads_1.Worker(WORKER_SOURCE, {
        eval: true,
        workerData: { pdfjsPath: require.resolve('pdfjs-dist/legacy/build/pdf.mjs'), data },
        transferList: [data.buffer],
        resourceLimits: { maxOldGenerationSizeMb: 1024 },
        stdout: true,
        stderr: true,
    });
    return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
            reject(new PdfReadError('timeout', `reading the PDF took longer than ${Math.round(timeoutMs / 1000)} s`));
            void worker.terminate();
        }, timeoutMs);
        const settle = (fn) => {
            clearTimeout(timer);
            fn();
            void worker.terminate();
        };
        worker.once('message', (msg) => {
            if (msg.ok)
                return settle(() => resolve(msg.pages));
            const reason = msg.name === 'PasswordException' ? 'password' : msg.name === 'InvalidPDFException' ? 'invalid' : 'failed';
            settle(() => reject(new PdfReadError(reason, msg.message)));
        });
        worker.once('error', (e) => settle(() => reject(new PdfReadError('failed', e.message))));
        worker.once('exit', (code) => settle(() => reject(new PdfReadError('failed', `the PDF reader stopped (exit ${code})`))));
    });
}
/**
 * Text runs → lines with their page. A run ends its line at hasEOL or when the baseline moves;
 * a vertical gap wider than 1.6 line heights, and every page break, separates paragraphs (a
 * blank line). Lines holding only a page number are dropped.
 */
function pdfItemsToLines(pages) {
    const out = [];
    pages.forEach((items, p) => {
        const page = p + 1;
        const lines = [];
        let cur = null;
        for (const [str, eol, , y, height] of items) {
            if (cur && Math.abs(y - cur.y) > Math.max(2, (cur.height || height) * 0.5)) {
                lines.push(cur);
                cur = null;
            }
            if (!cur)
                cur = { text: '', y, height };
            cur.text += str;
            cur.height = Math.max(cur.height, height);
            if (eol) {
                lines.push(cur);
                cur = null;
            }
        }
        if (cur)
            lines.push(cur);
        if (out.length)
            out.push({ text: '', page });
        let prev = null;
        for (const line of lines) {
            const text = line.text.replace(/\s+/g, ' ').trim();
            if (!text || /^(page\s+)?\d{1,4}$/i.test(text))
                continue;
            if (prev && prev.y - line.y > 1.6 * Math.max(prev.height, line.height, 1))
                out.push({ text: '', page });
            out.push({ text, page });
            prev = line;
        }
    });
    return out;
}
//# sourceMappingURL=pdf-extractor.js.map