import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The compiled tree the chaos harness starts processes from. `npm run chaos` runs from
 * dist/test/chaos, two levels below it; vitest runs the sources in test/chaos, whose
 * compiled twins are in the repository's dist/ (`npm test` builds before vitest runs).
 */
const here = fileURLToPath(new URL(".", import.meta.url));
const DIST = existsSync(join(here, "../../shared/cli/main.js")) ? resolve(here, "../..") : resolve(here, "../../dist");

/** `ha-module`'s entry point. */
export const CLI_PATH = join(DIST, "shared/cli/main.js");
/** azurite-process.ts, compiled. */
export const AZURITE_PROCESS_PATH = join(DIST, "test/chaos/azurite-process.js");
/** postgres-process.ts, compiled. */
export const POSTGRES_PROCESS_PATH = join(DIST, "test/chaos/postgres-process.js");
/** worker.ts, compiled. */
export const WORKER_PATH = join(DIST, "test/chaos/worker.js");
/** main.ts, compiled: what `npm run chaos` runs. */
export const CHAOS_MAIN_PATH = join(DIST, "test/chaos/main.js");
