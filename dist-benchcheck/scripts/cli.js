"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
/**
 * `npm run cli -- <command>`:
 *   token --user <id> [--ttl <seconds>]      mint a bearer token from the local AUTH_JWT_SECRET
 *   projections rebuild                      drop the read models and replay the log into them
 */
const node_util_1 = require("node:util");
const config_1 = require("@parley/config");
const cli_progress_1 = require("cli-progress");
const pg_1 = require("pg");
const event_store_1 = require("@parley/event-store");
const read_models_1 = require("@parley/read-models");
const auth_guard_1 = require("../apps/api/src/auth/auth.guard");
const commands = {
    async token(argv) {
        const { values } = (0, node_util_1.parseArgs)({ args: argv, options: { user: { type: 'string' }, ttl: { type: 'string' } } });
        if (!values.user)
            throw new UsageError('token needs --user <id>');
        const ttl = values.ttl ? Number(values.ttl) : 24 * 3600;
        if (!Number.isInteger(ttl) || ttl <= 0)
            throw new UsageError('--ttl takes a positive number of seconds');
        console.log((0, auth_guard_1.mintToken)(values.user, (0, config_1.loadConfig)().auth.jwtSecret, ttl));
    },
    async projections(argv) {
        if (argv[0] !== 'rebuild')
            throw new UsageError('usage: npm run cli -- projections rebuild');
        const pool = new pg_1.Pool({ connectionString: (0, config_1.loadConfig)().databaseUrl });
        const bar = new cli_progress_1.SingleBar({ format: 'rebuilding read models [{bar}] {value}/{total} events' }, cli_progress_1.Presets.shades_classic);
        try {
            bar.start(0, 0);
            const { events, ms } = await (0, read_models_1.rebuildReadModels)(new event_store_1.EventStore(pool), (applied, total) => {
                bar.setTotal(total);
                bar.update(applied);
            });
            bar.stop();
            console.log(`${events} events in ${(ms / 1000).toFixed(2)} s (${Math.round(events / (ms / 1000))} events/s)`);
        }
        finally {
            bar.stop();
            await pool.end();
        }
    },
};
class UsageError extends Error {
}
async function main() {
    const [name, ...rest] = process.argv.slice(2);
    const command = name ? commands[name] : undefined;
    if (!command)
        throw new UsageError(`usage: npm run cli -- <${Object.keys(commands).join('|')}> …`);
    await command(rest);
}
main().catch((e) => {
    console.error(e.message);
    process.exit(e instanceof UsageError ? 2 : 1);
});
//# sourceMappingURL=cli.js.map