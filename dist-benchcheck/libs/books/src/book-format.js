"use strict";
var __importDefault = (this && this.__importDefault) || function (mod) {
    return (mod && mod.__esModule) ? mod : { "default": mod };
};
Object.defineProperty(exports, "__esModule", { value: true });
exports.formatOfFile = formatOfFile;
exports.titleOfFile = titleOfFile;
const node_path_1 = __importDefault(require("node:path"));
/** The format a file's name (or, failing that, its content type) says it has; null when neither tells. */
function formatOfFile(fileName, mimeType = '') {
    const ext = node_path_1.default.extname(fileName).toLowerCase();
    if (ext === '.txt' || ext === '.text')
        return 'text';
    if (ext === '.md' || ext === '.markdown')
        return 'markdown';
    if (ext === '.pdf')
        return 'pdf';
    const type = mimeType.split(';')[0].trim().toLowerCase();
    if (type === 'application/pdf')
        return 'pdf';
    if (type === 'text/markdown' || type === 'text/x-markdown')
        return 'markdown';
    if (type === 'text/plain')
        return 'text';
    return null;
}
/** A title from a file name: "pride_and_prejudice.txt" → "pride_and_prejudice". */
function titleOfFile(fileName) {
    return node_path_1.default.basename(fileName, node_path_1.default.extname(fileName)).trim().slice(0, 200) || 'Untitled';
}
//# sourceMappingURL=book-format.js.map