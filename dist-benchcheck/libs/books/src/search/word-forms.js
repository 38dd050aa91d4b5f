"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.wordForms = wordForms;
/**
 * Irregular English verbs, whose past forms the Snowball stemmer cannot bring back to the base
 * ("said" stays "said", "told" stays "told"). Readers ask in the present ("What did the Cat
 * say?") while narrative is in the past ("said the Cat"), so search treats these forms as the
 * same word. Forms that are as often other words in fiction (rose, bit, lay, ground, wound) are
 * left out.
 */
const IRREGULAR = `
arise arose arisen|awake awoke awoken|bear bore borne|beat beaten|become became|begin began begun|bend bent|
bind bound|bite bitten|bleed bled|blow blew blown|break broke broken|breed bred|bring brought|build built|burn burnt|
buy bought|catch caught|choose chose chosen|cling clung|come came|creep crept|deal dealt|dig dug|
draw drew drawn|fall fell fallen|feel felt|dream dreamt|drink drank drunk|drive drove driven|dwell dwelt|eat ate eaten|fight fought|find found|flee fled|
fling flung|fly flew flown|forbid forbade forbidden|forget forgot forgotten|forgive forgave forgiven|freeze froze frozen|
get got gotten|give gave given|go went gone|grow grew grown|hang hung|hear heard|hide hid hidden|hold held|
keep kept|lead led|leave left|kneel knelt|know knew known|lend lent|lose lost|make made|mean meant|meet met|pay paid|prove proven|
ride rode ridden|rise risen|ring rang rung|run ran|say said|see saw seen|seek sought|sell sold|send sent|shake shook shaken|shine shone|
shoot shot|shrink shrank shrunk|sing sang sung|sink sank sunk|sit sat|slay slew slain|sleep slept|slide slid|sling slung|
speak spoke spoken|spend spent|spin spun|spring sprang sprung|stand stood|steal stole stolen|stick stuck|sting stung|
stride strode|strike struck|string strung|strive strove striven|swear swore sworn|sweep swept|swim swam swum|swing swung|
take took taken|teach taught|tear torn|tell told|think thought|throw threw thrown|tread trod trodden|understand understood|
wake woke woken|wear wore worn|weave wove woven|weep wept|win won|wring wrung|write wrote written
`;
const FORMS = new Map();
for (const group of IRREGULAR.split('|')) {
    const forms = group.trim().split(/\s+/).filter(Boolean);
    if (forms.length < 2)
        continue;
    for (const f of forms)
        FORMS.set(f, forms.filter((o) => o !== f));
}
/** For each word of the text with irregular forms, the other forms: [word, form] pairs. */
function wordForms(text) {
    const pairs = [];
    const seen = new Set();
    for (const word of text.toLowerCase().split(/[^\p{L}]+/u)) {
        if (seen.has(word))
            continue;
        seen.add(word);
        for (const form of FORMS.get(word) ?? [])
            pairs.push([word, form]);
    }
    return pairs;
}
//# sourceMappingURL=word-forms.js.map