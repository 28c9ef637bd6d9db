/**
 * Loads a packaged functions app as the Node.js worker does, with the functions-core stand-in
 * preloaded (`node --import functions-core-stand-in.mjs load-azure-app.mjs <entry> <requests>`),
 * invokes `requests` (a JSON array of [functionName, request]) and prints, on a line of its own
 * after RESULT_MARK, what was registered and answered.
 */
import process from "node:process";
import { pathToFileURL } from "node:url";

export const RESULT_MARK = "functions-core-stand-in:";

const [entry, requests] = process.argv.slice(2);
const standIn = globalThis.functionsCoreStandIn;
let loaded = "ok";
try {
  await import(pathToFileURL(entry).href);
} catch (error) {
  loaded = error instanceof Error ? error.message : String(error);
}
const answers = [];
for (const [name, request] of JSON.parse(requests ?? "[]")) answers.push(await standIn.invoke(name, request));
const result = {
  loaded,
  functions: standIn.functions.map(({ metadata }) => ({ name: metadata.name, bindings: metadata.bindings })),
  hooks: standIn.hooks.map((hook) => hook.name),
  answers,
};
process.stdout.write(`\n${RESULT_MARK}${JSON.stringify(result)}\n`);
process.exit(0);
