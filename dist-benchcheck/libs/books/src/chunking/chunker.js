"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.DEFAULT_CHUNK_OPTIONS = void 0;
exports.splitSentences = splitSentences;
exports.splitLong = splitLong;
exports.chunkBook = chunkBook;
exports.DEFAULT_CHUNK_OPTIONS = { minChars: 800, maxChars: 1200, overlapChars: 300 };
const ABBREVIATION = /(?:^|[\s(])(?:Mr|Mrs|Ms|Dr|St|Mt|Jr|Sr|Prof|Rev|Capt|Col|Gen|Lt|No|vs|etc|viz|i\.e|e\.g|[A-Z])\.$/;
/** Sentences: split after . ! ? (and closing quotes), not after common abbreviations or initials. */
function splitSentences(paragraph) {
    const pieces = paragraph.split(/(?<=[.!?]['"\u2019\u201d)\]_]*)\s+(?=[\p{Lu}\p{N}'"\u2018\u201c([_])/u);
    const out = [];
    for (const piece of pieces) {
        if (out.length && ABBREVIATION.test(out[out.length - 1]))
            out[out.length - 1] += ' ' + piece;
        else
            out.push(piece);
    }
    return out;
}
/** Cuts text longer than `max` at clause boundaries (; : , —) where it can, else between words. */
function splitLong(text, max) {
    const out = [];
    let rest = text;
    while (rest.length > max) {
        const window = rest.slice(0, max + 1);
        let cut = -1;
        for (const re of [/[;:]\s/g, /[,\u2014]\s|--\s?/g, /\s/g]) {
            let m;
            let last = -1;
            while ((m = re.exec(window)) !== null)
                if (m.index + m[0].length <= max && m.index > max / 3)
                    last = m.index + m[0].length;
            if (last > 0) {
                cut = last;
                break;
            }
        }
        if (cut <= 0)
            cut = max; // one word longer than max
        out.push(rest.slice(0, cut).trimEnd());
        rest = rest.slice(cut).trimStart();
    }
    if (rest)
        out.push(rest);
    return out;
}
function joinUnits(units) {
    return units.map((u, i) => (i === 0 ? '' : u.paragraph !== units[i - 1].paragraph ? '\n\n' : ' ') + u.text).join('');
}
function lengthOf(units) {
    return joinUnits(units).length;
}
/**
 * Paragraph-aware chunks of about minChars..maxChars. A chunk ends at a paragraph break once it
 * is long enough and the next paragraph would not fit, else at a sentence; the next chunk begins
 * with the previous one's last paragraph (or sentences) up to overlapChars, so a passage cut in
 * two is whole in one of them. Chunks never span chapters or sections.
 */
function chunkBook(chapters, options = {}) {
    const opts = { ...exports.DEFAULT_CHUNK_OPTIONS, ...options };
    const maxUnit = Math.max(80, opts.maxChars - opts.minChars);
    const chunks = [];
    for (const chapter of chapters) {
        // runs of paragraphs under the same section
        const runs = [];
        chapter.paragraphs.forEach((p, pi) => {
            if (!runs.length || runs[runs.length - 1].section !== p.section)
                runs.push({ section: p.section, units: [] });
            const units = runs[runs.length - 1].units;
            splitSentences(p.text)
                .flatMap((s) => splitLong(s, maxUnit))
                .forEach((text, si) => units.push({ text, paragraph: pi, startsParagraph: si === 0, page: p.page }));
        });
        for (const run of runs) {
            for (const units of pack(run.units, opts)) {
                chunks.push({
                    ordinal: chunks.length,
                    chapterIndex: chapter.index,
                    chapter: chapter.title,
                    section: run.section,
                    page: units[0].page,
                    text: joinUnits(units),
                });
            }
        }
    }
    return chunks;
}
function pack(units, opts) {
    const out = [];
    let cur = [];
    let fresh = 0; // units in cur that are not overlap from the previous chunk
    /** whether cur plus the whole paragraph starting at unit i would exceed the limit */
    const paragraphOverflows = (i) => {
        let len = lengthOf(cur) + 2;
        for (let j = i; j < units.length && units[j].paragraph === units[i].paragraph; j++) {
            len += units[j].text.length + 1;
            if (len > opts.maxChars)
                return true;
        }
        return false;
    };
    for (let i = 0; i < units.length; i++) {
        const u = units[i];
        if (fresh > 0) {
            const full = lengthOf([...cur, u]) > opts.maxChars;
            const breakHere = u.startsParagraph && lengthOf(cur) >= opts.minChars && paragraphOverflows(i);
            if (full || breakHere) {
                out.push(cur);
                cur = overlapOf(cur, opts.overlapChars);
                fresh = 0;
            }
        }
        // the overlap gives way when it would push this unit over the limit
        while (cur.length && lengthOf([...cur, u]) > opts.maxChars)
            cur = cur.slice(1);
        cur.push(u);
        fresh++;
    }
    if (fresh > 0) {
        const tail = cur.slice(cur.length - fresh);
        const prev = out[out.length - 1];
        // a short tail joins the chunk before it when that still fits
        if (prev && lengthOf(tail) < opts.minChars / 4 && lengthOf([...prev, ...tail]) <= opts.maxChars)
            prev.push(...tail);
        else
            out.push(cur);
    }
    return out;
}
/**
 * What the next chunk repeats: the chunk's last sentence, plus the sentences before it in the same
 * paragraph while they fit in the budget (the whole last paragraph when it is short). Never the
 * whole chunk.
 */
function overlapOf(chunk, budget) {
    const tail = [];
    for (let i = chunk.length - 1; i > 0; i--) {
        if (tail.length && lengthOf([chunk[i], ...tail]) > budget)
            break;
        tail.unshift(chunk[i]);
        if (chunk[i].startsParagraph)
            break;
    }
    return tail;
}
//# sourceMappingURL=chunker.js.map