"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.citedPassages = citedPassages;
/**
 * The passages an answer cites: every [n] (also [n, m] and [n-m]) in its text mapped to the
 * chunk numbered n by this turn's tool results, each chunk once, in order of first citation.
 */
function citedPassages(text, turn) {
    const numbered = new Map();
    for (const it of turn.iterations) {
        for (const r of it.results.values())
            r.chunks.forEach((c, i) => numbered.set(r.citationStart + i, c));
    }
    const cited = [];
    const seen = new Set();
    for (const m of text.matchAll(/\[(\d+(?:\s*[-–,]\s*\d+)*)\]/g)) {
        for (const n of expand(m[1])) {
            const c = numbered.get(n);
            if (c && !seen.has(c.chunkId)) {
                seen.add(c.chunkId);
                cited.push(c);
            }
        }
    }
    return cited;
}
function expand(list) {
    return list.split(',').flatMap((part) => {
        const [a, b] = part.split(/[-–]/).map((x) => Number(x.trim()));
        if (b === undefined)
            return [a];
        return b >= a && b - a < 50 ? Array.from({ length: b - a + 1 }, (_, i) => a + i) : [a, b];
    });
}
//# sourceMappingURL=citations.js.map