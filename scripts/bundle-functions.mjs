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
 * declarative configuration reader. The Azure Monitor distro hands the SDK its own span,
 * metric and log processors, so the SDK never makes those exporters; they were a third of the
 * bundle and of its start-up time.
 */
import { build } from "esbuild";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** The bundle's file, relative to the app's root (package.json "main" in the zip). */
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
 * Builds the bundle into `outDir` (the app's root): `outDir`/dist/functions/index.mjs.
 * Returns esbuild's metafile, which says what went in.
 */
export async function bundleFunctions(outDir) {
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: [path.join(ROOT, "functions", "index.ts")],
    outfile: path.join(outDir, BUNDLE_ENTRY),
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    minify: true,
    treeShaking: true,
    legalComments: "none",
    external: ["@azure/functions-core"],
    plugins: [unshipped],
    // The CommonJS packages inside call require() for Node's modules and for the worker's
    // @azure/functions-core: give the module a real one.
    banner: { js: 'import { createRequire as __haCreateRequire } from "node:module"; const require = __haCreateRequire(import.meta.url);' },
    metafile: true,
    logLevel: "warning",
  });
  return result.metafile;
}
