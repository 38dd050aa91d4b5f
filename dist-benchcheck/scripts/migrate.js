"use strict";
var __importDefault = (this && this.__importDefault) || function (mod) {
    return (mod && mod.__esModule) ? mod : { "default": mod };
};
Object.defineProperty(exports, "__esModule", { value: true });
exports.ensureDatabase = ensureDatabase;
exports.migrate = migrate;
/**
 * `npm run migrate`: creates the database named in DATABASE_URL when it is missing, then applies
 * migrations/ with node-pg-migrate (idempotent: applied files are recorded in pgmigrations).
 */
const node_path_1 = __importDefault(require("node:path"));
const pg_1 = require("pg");
const node_pg_migrate_1 = require("node-pg-migrate");
const src_1 = require("../libs/config/src");
const project_root_1 = require("../libs/platform/src/project-root");
async function ensureDatabase(databaseUrl) {
    const url = new URL(databaseUrl);
    const name = decodeURIComponent(url.pathname.slice(1));
    url.pathname = '/postgres';
    const admin = new pg_1.Client({ connectionString: url.toString() });
    await admin.connect();
    try {
        const found = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
        if (found.rowCount === 0) {
            await admin.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`).catch((e) => {
                if (e.code !== '42P04')
                    throw e; // created by a concurrent migrate
            });
        }
    }
    finally {
        await admin.end();
    }
}
async function migrate(databaseUrl, log = () => undefined) {
    await ensureDatabase(databaseUrl);
    await (0, node_pg_migrate_1.runner)({
        databaseUrl,
        dir: node_path_1.default.join((0, project_root_1.projectRoot)(), 'migrations'),
        migrationsTable: 'pgmigrations',
        direction: 'up',
        checkOrder: true,
        log,
        logger: { info: log, warn: log, error: log, debug: () => undefined },
    });
}
if (require.main === module) {
    const { databaseUrl } = (0, src_1.loadConfig)();
    migrate(databaseUrl, (m) => console.log(m)).then(() => console.log('migrations applied'), (e) => {
        console.error(`migrate failed: ${e.message}`);
        process.exit(1);
    });
}
//# sourceMappingURL=migrate.js.map