"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
require("reflect-metadata");
const config_1 = require("@parley/config");
const create_api_app_1 = require("./create-api-app");
async function main() {
    const app = await (0, create_api_app_1.createApiApp)();
    const { port } = app.get(config_1.CONFIG);
    await app.listen(port, '0.0.0.0');
}
main().catch((e) => {
    console.error(e.message);
    process.exit(1);
});
//# sourceMappingURL=main.js.map