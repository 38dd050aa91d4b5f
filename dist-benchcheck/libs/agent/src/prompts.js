"use strict";
var __importDefault = (this && this.__importDefault) || function (mod) {
    return (mod && mod.__esModule) ? mod : { "default": mod };
};
Object.defineProperty(exports, "__esModule", { value: true });
exports.renderPrompt = renderPrompt;
const node_fs_1 = require("node:fs");
const node_path_1 = __importDefault(require("node:path"));
const platform_1 = require("@parley/platform");
const cache = new Map();
/** A Markdown template from prompts/, with {{name}} placeholders filled in. Unknown names are an error. */
function renderPrompt(name, vars) {
    let template = cache.get(name);
    if (template === undefined) {
        template = (0, node_fs_1.readFileSync)(node_path_1.default.join((0, platform_1.projectRoot)(), 'prompts', `${name}.md`), 'utf8');
        cache.set(name, template);
    }
    return template
        .replace(/\{\{(\w+)\}\}/g, (_, key) => {
        if (!(key in vars))
            throw new Error(`prompt ${name} needs {{${key}}}`);
        return vars[key];
    })
        .trim();
}
//# sourceMappingURL=prompts.js.map