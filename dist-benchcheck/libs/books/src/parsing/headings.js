"use strict";
/**
 * Recognising chapter headings in running text: `CHAPTER I. Down the Rabbit-Hole`, `Chapter 1`,
 * `Letter 4`, `CHAPTER TWENTY-ONE`, `PREFACE`, or (as a last resort) a bare `IV.` line.
 */
Object.defineProperty(exports, "__esModule", { value: true });
exports.romanToInt = romanToInt;
exports.wordsToInt = wordsToInt;
exports.matchHeading = matchHeading;
const ROMAN = /^M{0,4}(CM|CD|D?C{0,3})(XC|XL|L?X{0,3})(IX|IV|V?I{0,3})$/;
const ROMAN_VALUES = { I: 1, V: 5, X: 10, L: 50, C: 100, D: 500, M: 1000 };
/** The value of a well-formed roman numeral (any case), else null. */
function romanToInt(s) {
    const up = s.toUpperCase();
    if (!up || !ROMAN.test(up))
        return null;
    let total = 0;
    for (let i = 0; i < up.length; i++) {
        const v = ROMAN_VALUES[up[i]];
        const next = i + 1 < up.length ? ROMAN_VALUES[up[i + 1]] : 0;
        total += v < next ? -v : v;
    }
    return total;
}
const UNITS = [
    'zero',
    'one',
    'two',
    'three',
    'four',
    'five',
    'six',
    'seven',
    'eight',
    'nine',
    'ten',
    'eleven',
    'twelve',
    'thirteen',
    'fourteen',
    'fifteen',
    'sixteen',
    'seventeen',
    'eighteen',
    'nineteen',
];
const UNIT_ORDINALS = [
    'zeroth',
    'first',
    'second',
    'third',
    'fourth',
    'fifth',
    'sixth',
    'seventh',
    'eighth',
    'ninth',
    'tenth',
    'eleventh',
    'twelfth',
    'thirteenth',
    'fourteenth',
    'fifteenth',
    'sixteenth',
    'seventeenth',
    'eighteenth',
    'nineteenth',
];
const TENS = ['', '', 'twenty', 'thirty', 'forty', 'fifty', 'sixty', 'seventy', 'eighty', 'ninety'];
const TEN_ORDINALS = [
    '',
    '',
    'twentieth',
    'thirtieth',
    'fortieth',
    'fiftieth',
    'sixtieth',
    'seventieth',
    'eightieth',
    'ninetieth',
];
function wordValue(w) {
    let i = UNITS.indexOf(w);
    if (i < 0)
        i = UNIT_ORDINALS.indexOf(w);
    if (i >= 0)
        return { value: i, tens: false };
    i = TENS.indexOf(w);
    if (i < 0)
        i = TEN_ORDINALS.indexOf(w);
    if (i >= 2)
        return { value: i * 10, tens: true };
    return null;
}
/** "twenty-one", "Twenty First", "ELEVENTH", "the first" → number; anything else → null. */
function wordsToInt(s) {
    const words = s
        .toLowerCase()
        .replace(/^the\s+/, '')
        .split(/[\s-]+/)
        .filter(Boolean);
    if (words.length === 0 || words.length > 2)
        return null;
    const first = wordValue(words[0]);
    if (!first || first.value === 0)
        return null;
    if (words.length === 1)
        return first.value;
    const second = wordValue(words[1]);
    if (!first.tens || !second || second.tens || second.value === 0 || second.value > 9)
        return null;
    return first.value + second.value;
}
const NUMBER_WORD = '(?:' + [...UNITS, ...UNIT_ORDINALS, ...TENS, ...TEN_ORDINALS].filter(Boolean).join('|') + ')';
const NUMBER = `(\\d{1,4}|[IVXLCDM]{1,8}|(?:the\\s+)?${NUMBER_WORD}(?:[\\s-]${NUMBER_WORD})?)`;
/** Keyword + number, then optionally a separator and a title: the keyword is capitalised or all caps. */
const CHAPTER_LINE = new RegExp(`^(CHAPTER|Chapter|LETTER|Letter)\\s+${NUMBER}(?![\\p{L}\\d])\\s*([.:\\-\u2013\u2014]\\s*)?(.*)$`, 'iu');
const PART_LINE = new RegExp(`^(BOOK|Book|PART|Part|VOLUME|Volume|VOL\\.|Vol\\.)\\s+${NUMBER}(?![\\p{L}\\d])\\s*([.:\\-\u2013\u2014]\\s*)?(.*)$`, 'iu');
const NAMED_LINE = /^(PREFACE|Preface|PROLOGUE|Prologue|EPILOGUE|Epilogue|INTRODUCTION|Introduction|AFTERWORD|Afterword|CONCLUSION|Conclusion)\.?$/;
const BARE_ROMAN_LINE = /^([IVXLC]{1,7})\.?(?:\s+(.*))?$/;
function parseNumber(s) {
    if (/^\d+$/.test(s))
        return Number(s);
    return romanToInt(s) ?? wordsToInt(s);
}
/** A title after the number must read like one: not a sentence running on in lower case. */
function plausibleTitle(t) {
    return t.length <= 100 && !/^\p{Ll}/u.test(t) && !/[,;]$/.test(t);
}
function keywordCaseOk(keyword) {
    return keyword === keyword.toUpperCase() || /^\p{Lu}\p{Ll}+\.?$/u.test(keyword);
}
/** Classifies one trimmed line; null when it is not a heading of any kind. */
function matchHeading(line) {
    const text = line.replace(/\s+/g, ' ').trim();
    if (!text || text.length > 120)
        return null;
    for (const [re, kind] of [
        [CHAPTER_LINE, 'chapter'],
        [PART_LINE, 'part'],
    ]) {
        const m = re.exec(text);
        if (!m || !keywordCaseOk(m[1]))
            continue;
        const n = parseNumber(m[2].replace(/^the\s+/i, 'the '));
        if (n === null)
            continue;
        const title = (m[4] ?? '').trim();
        if (title && !plausibleTitle(title))
            continue;
        const keyword = m[1].toLowerCase().replace(/\.$/, '');
        const family = kind === 'chapter' ? keyword : 'part';
        return { kind, key: `${family}:${n}`, number: n, label: text, inlineTitle: title };
    }
    const named = NAMED_LINE.exec(text);
    if (named)
        return { kind: 'named', key: `named:${named[1].toLowerCase()}`, number: null, label: text, inlineTitle: '' };
    const bare = BARE_ROMAN_LINE.exec(text);
    if (bare) {
        const n = romanToInt(bare[1]);
        const title = (bare[2] ?? '').trim();
        // "I" alone is a pronoun as often as a numeral: it needs the full stop or a title
        if (n !== null && (text !== 'I' || title) && (!title || (plausibleTitle(title) && title === title.toUpperCase()))) {
            return { kind: 'numeral', key: `numeral:${n}`, number: n, label: text, inlineTitle: title };
        }
    }
    return null;
}
//# sourceMappingURL=headings.js.map