/**
 * Bundles the Azure Functions app (functions/index.ts and what it imports) into one ES module
 * with esbuild, for the deploy zip (scripts/package.mjs). The CLI, the SDK and `npm start`
 * keep running from the TypeScript build (`npm run build`); only Azure runs the bundle.
 *
 * What stays outside the bundle:
 *   @azure/functions-core   the module the Node.js worker injects at run time (it answers
 *                           `require("@azure/functions-core")` itself): it is no package.
 * Everything else is bundled, the OpenTelemetry instrumentations included: the ones the
 * Azure Monitor distro enables patch modules through `require`, which the bundle keeps for
 * Node's built-in modules (the banner below), so they patch what they patched before.
 *
 * Left out, replaced by a module whose every export throws when used (UNSHIPPED): the
 * OpenTelemetry SDK's OTLP and Zipkin exporters, the gRPC stack under them and its
 * declarative configuration reader (the Azure Monitor distro hands the SDK its own span,
 * metric and log processors, so the SDK never makes those exporters: they were a third of the
 * bundle and of its start-up time), and the distro's instrumentations of libraries the app
 * never loads, which azure-telemetry.ts turns off (UNUSED_INSTRUMENTATIONS).
 *
 * Split at the app's dynamic imports: the telemetry set-up and the Cosmos DB SDK are chunks
 * of their own (dist/functions/chunks/), loaded only by an app that uses them.
 */
import { build } from "esbuild";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** The bundle's entry, relative to the app's root (package.json "main" in the zip); its chunks are beside it in chunks/. */
export const BUNDLE_ENTRY = "dist/functions/index.mjs";

export const UNSHIPPED = [
  "@grpc/grpc-js",
  "@grpc/proto-loader",
  "@opentelemetry/configuration",
  "@opentelemetry/exporter-logs-otlp-grpc",
  "@opentelemetry/exporter-logs-otlp-http",
  "@opentelemetry/exporter-logs-otlp-proto",
  "@opentelemetry/exporter-metrics-otlp-grpc",
  "@opentelemetry/exporter-metrics-otlp-http",
  "@opentelemetry/exporter-metrics-otlp-proto",
  "@opentelemetry/exporter-trace-otlp-grpc",
  "@opentelemetry/exporter-trace-otlp-http",
  "@opentelemetry/exporter-trace-otlp-proto",
  "@opentelemetry/exporter-zipkin",
  "@opentelemetry/otlp-grpc-exporter-base",
  "@opentelemetry/otlp-transformer",
  "@opentelemetry/instrumentation-bunyan",
  "@opentelemetry/instrumentation-mongodb",
  "@opentelemetry/instrumentation-mysql",
  "@opentelemetry/instrumentation-pg",
  "@opentelemetry/instrumentation-redis",
  "@opentelemetry/instrumentation-winston",
];

const unshippedPattern = new RegExp(`^(${UNSHIPPED.map((name) => name.replace(/[/.-]/g, "\\$&")).join("|")})(/.*)?$`);

/** Each left-out module: loads, and throws with its name the moment anything of it is used. */
const unshipped = {
  name: "unshipped",
  setup(builder) {
    builder.onResolve({ filter: unshippedPattern }, (args) => ({ path: args.path, namespace: "unshipped" }));
    builder.onLoad({ filter: /.*/, namespace: "unshipped" }, (args) => ({
      loader: "js",
      contents: `const name = ${JSON.stringify(args.path)};
const refuse = () => { throw new Error(name + " is not in the ha-module package: the Azure Monitor distro exports to Application Insights."); };
module.exports = new Proxy({}, { get: (_, key) => (key === "__esModule" ? false : new Proxy(function () {}, { apply: refuse, construct: refuse })) });`,
    }));
  },
};

/**
 * One copy of each package version: npm nests the same version of a package under each of
 * its dependents when the top level holds another (eleven copies of two @opentelemetry/core
 * versions here). Each import is resolved as esbuild would, then pointed at the first
 * directory seen holding that name and version, as a deduplicated install would be.
 */
const oneCopyPerVersion = {
  name: "one-copy-per-version",
  setup(builder) {
    const firstRoot = new Map();
    const versions = new Map();
    const versionOf = (root) => {
      if (!versions.has(root)) versions.set(root, JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")).version);
      return versions.get(root);
    };
    builder.onResolve({ filter: /^[^./]/ }, async (args) => {
      if (args.pluginData?.deduplicating === true) return undefined;
      const found = await builder.resolve(args.path, { kind: args.kind, importer: args.importer, resolveDir: args.resolveDir, pluginData: { deduplicating: true } });
      if (found.errors.length > 0 || found.external || found.namespace !== "file") return found;
      const match = /^(.*\/node_modules\/(?:@[^/]+\/)?[^/]+)\/(.*)$/.exec(found.path);
      if (match === null) return found;
      const [, root, rest] = match;
      const key = `${path.basename(path.dirname(root)).startsWith("@") ? `${path.basename(path.dirname(root))}/` : ""}${path.basename(root)}@${versionOf(root)}`;
      if (!firstRoot.has(key)) firstRoot.set(key, root);
      return { ...found, path: path.join(firstRoot.get(key), rest) };
    });
  },
};

/**
 * Builds the bundle into `outDir` (the app's root): `outDir`/dist/functions/index.mjs and its
 * chunks. Returns esbuild's metafile, which says what went in.
 */
export async function bundleFunctions(outDir) {
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: [path.join(ROOT, "functions", "index.ts")],
    outdir: path.join(outDir, path.dirname(BUNDLE_ENTRY)),
    entryNames: path.basename(BUNDLE_ENTRY, ".mjs"),
    chunkNames: "chunks/[name]-[hash]",
    outExtension: { ".js": ".mjs" },
    splitting: true,
    bundle: true,
    platform: "node",
    // ES module builds first where a package has both: esbuild can tree-shake those, not CommonJS.
    mainFields: ["module", "main"],
    format: "esm",
    target: "node20",
    minify: true,
    treeShaking: true,
    legalComments: "none",
    // pg-native: pg's optional libpq binding, required only if an app asks for pg.native (ours never does).
    external: ["@azure/functions-core", "pg-native"],
    plugins: [unshipped, oneCopyPerVersion],
    // The CommonJS packages inside call require() for Node's modules and for the worker's
    // @azure/functions-core: give the module a real one.
    banner: { js: 'import { createRequire as __haCreateRequire } from "node:module"; const require = __haCreateRequire(import.meta.url);' },
    metafile: true,
    logLevel: "warning",
  });
  return result.metafile;
}
