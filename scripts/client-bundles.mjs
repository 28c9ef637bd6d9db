/**
 * The client's two programs, each bundled into one file with esbuild from the TypeScript
 * sources: the SDK (shared/sdk/index.ts, `ha-module/sdk`) and the command line without
 * `serve` (shared/cli/client-main.ts). scripts/pack-client.mjs puts them in the npm
 * package as ES modules; scripts/build-exe.mjs puts the command line, as the one CommonJS
 * script Node's single executable applications take, into the executable.
 *
 * A worker must never need the service's code: a bundle that would take in anything of
 * functions/, the local host, the stores or the service's domain, or any package of
 * node_modules (the client has no dependency), fails the build naming the file.
 */
import { build } from "esbuild";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** What the client may be built from: the SDK, the contract, the command line and the version. */
const CLIENT_SOURCES = /^shared\/(sdk|contract|cli)\/|^shared\/config\/package-version\.ts$/;
/** …but not `serve`: it and its local host are the repository's (shared/cli/main.ts). */
const SERVER_SOURCES = /^shared\/cli\/(main|commands\/serve)\.ts$/;

export const version = () => JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")).version;

/** Throws naming every input of a bundle that is not the client's own source. */
function checkInputs(metafile, what) {
  const foreign = Object.keys(metafile.inputs).filter((input) => !CLIENT_SOURCES.test(input) || SERVER_SOURCES.test(input));
  if (foreign.length > 0) throw new Error(`${what} would take in what is not the client's: ${foreign.join(", ")}`);
}

async function bundle({ entry, outfile, format }) {
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: [path.join(ROOT, entry)],
    outfile,
    bundle: true,
    platform: "node",
    format,
    target: "node20",
    // Readable: a worker's stack traces name the SDK's functions and lines.
    minify: false,
    legalComments: "none",
    // The single executable has no package.json to read its version from (shared/config/package-version.ts).
    define: { __HA_MODULE_VERSION__: JSON.stringify(version()), ...(format === "cjs" ? { "import.meta.url": "undefined" } : {}) },
    metafile: true,
    logLevel: "warning",
  });
  checkInputs(result.metafile, `${entry} bundled`);
  return result.metafile;
}

/** The SDK as one ES module at `outfile`. */
export function bundleSdk(outfile) {
  return bundle({ entry: "shared/sdk/index.ts", outfile, format: "esm" });
}

/** The command line (no `serve`) as one module at `outfile`: ES for the npm package, CommonJS for the single executable. */
export function bundleCli(outfile, format = "esm") {
  return bundle({ entry: "shared/cli/client-main.ts", outfile, format });
}
