import { createHash } from 'node:crypto';
import { boardCsp, inlineStyles } from './board-csp';

const sha = (css: string) => `'sha256-${createHash('sha256').update(css).digest('base64')}'`;

describe(boardCsp.name, () => {
  const template = '<div style="display:flex"><style>@keyframes x{}</style><span style="gap:1rem"></span></div>';

  it("hashes the template's inline styles, elements and attributes", () => {
    expect(inlineStyles(template)).toEqual(['@keyframes x{}', 'display:flex', 'gap:1rem']);
    const csp = boardCsp(template);
    for (const css of inlineStyles(template)) expect(csp).toContain(sha(css));
  });

  it('allows no inline script, no eval, no third party, and no framing', () => {
    const csp = boardCsp(template);
    expect(csp).toMatch(/^default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-hashes' /);
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:|\*/);
    expect(csp).toContain("frame-ancestors 'none'");
  });

  it('reads the installed template by default', () => {
    expect(boardCsp()).toContain(
      sha(
        "display:flex;flex-direction:column;align-items:center;justify-content:center;min-height:100vh;background:#151a21;font-family:'IBM Plex Sans',sans-serif;color:#8b96a5;font-size:0.85rem;gap:1rem;letter-spacing:0.05em;",
      ),
    );
  });
});
