"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.ToolRegistry = void 0;
/** The tools the agent may call, by name. A tool that throws becomes an is_error result. */
class ToolRegistry {
    constructor(tools) {
        this.byName = new Map();
        for (const t of tools) {
            if (this.byName.has(t.name))
                throw new Error(`two tools are named ${t.name}`);
            this.byName.set(t.name, t);
        }
    }
    specsFor(ctx) {
        return [...this.byName.values()]
            .filter((t) => t.availableFor(ctx))
            .sort((a, b) => a.name.localeCompare(b.name))
            .map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema }));
    }
    async run(name, input, ctx) {
        const tool = this.byName.get(name);
        if (!tool || !tool.availableFor(ctx))
            return { isError: true, content: `no tool named ${name} is available` };
        try {
            return await tool.run(input, ctx);
        }
        catch (e) {
            ctx.signal?.throwIfAborted();
            return { isError: true, content: `the tool failed: ${e?.message ?? String(e)}` };
        }
    }
}
exports.ToolRegistry = ToolRegistry;
//# sourceMappingURL=tool-registry.js.map