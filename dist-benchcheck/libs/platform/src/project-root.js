"use strict";
var __importDefault = (this && this.__importDefault) || function (mod) {
    return (mod && mod.__esModule) ? mod : { "default": mod };
};
Object.defineProperty(exports, "__esModule", { value: true });
exports.projectRoot = projectRoot;
const node_fs_1 = require("node:fs");
const node_path_1 = __importDefault(require("node:path"));
/** The repository root (holding migrations/ and prompts/), from source under ts or from dist/. */
function projectRoot(from = __dirname) {
    let dir = from;
    while (!(0, node_fs_1.existsSync)(node_path_1.default.join(dir, 'package.json')) || !(0, node_fs_1.existsSync)(node_path_1.default.join(dir, 'migrations'))) {
        const up = node_path_1.default.dirname(dir);
        if (up === dir)
            throw new Error(`no project root above ${from}`);
        dir = up;
    }
    return dir;
}
//# sourceMappingURL=project-root.js.map