/**
 * A stand-in for `@azure/functions-core`, the module the Azure Functions Node.js worker
 * injects: like the worker, it answers `require("@azure/functions-core")` by wrapping
 * Module.prototype.require, so the packaged app registers its functions here exactly as it
 * does in Azure (@azure/functions calls registerFunction, setProgrammingModel, registerHook).
 *
 * Preload it (`node --import <this file> …`); then globalThis.functionsCoreStandIn has what
 * was registered, and `invoke(name, request)` runs an HTTP function the way the worker does:
 * through the programming model's invocation model, with the host's RpcHttpData shape.
 *
 * FUNCTIONS_CORE_STAND_IN_HOST=old acts as a Functions host older than 4.34, which has no
 * log hooks: registering one throws as the worker does there.
 */
import { Buffer } from "node:buffer";
import Module from "node:module";
import process from "node:process";
import { URL } from "node:url";

const functions = [];
const hooks = [];
const logs = [];
let programmingModel;
const oldHost = process.env.FUNCTIONS_CORE_STAND_IN_HOST === "old";

class Disposable {
  constructor(callback) {
    this.callback = callback;
  }
  dispose() {
    this.callback?.();
  }
}

const core = {
  version: "3.12.0",
  hostVersion: oldHost ? "4.30.0" : "4.1041.200",
  registerFunction(metadata, callback) {
    functions.push({ metadata, callback });
    return new Disposable();
  },
  setProgrammingModel(model) {
    programmingModel = model;
  },
  getProgrammingModel() {
    return programmingModel;
  },
  registerHook(name, callback) {
    if (oldHost && name === "log") {
      // What the worker throws for a hook it does not know.
      const error = new RangeError(`Unrecognized hook "${name}"`);
      error.isAzureFunctionsSystemError = true;
      throw error;
    }
    hooks.push({ name, callback });
    return new Disposable();
  },
  log(level, category, message) {
    logs.push({ level, category, message });
  },
  Disposable,
};

const originalRequire = Module.prototype.require;
Module.prototype.require = new Proxy(originalRequire, {
  apply(target, thisArg, args) {
    return args[0] === "@azure/functions-core" ? core : Reflect.apply(target, thisArg, args);
  },
});

let invocations = 0;

/** Runs HTTP function `name` on `request` ({ method, url, headers?, params?, body? }) as the worker does; resolves to { status, headers, body }. */
async function invoke(name, request) {
  const found = functions.find((candidate) => candidate.metadata.name === name);
  if (found === undefined) throw new Error(`no function ${name} was registered`);
  const bindings = found.metadata.bindings;
  const triggerName = Object.keys(bindings).find((key) => bindings[key].type === "httpTrigger");
  const coreContext = {
    invocationId: `invocation-${++invocations}`,
    metadata: { name, bindings },
    request: {
      inputData: [
        {
          name: triggerName,
          data: {
            http: {
              method: request.method,
              url: request.url,
              headers: request.headers ?? {},
              params: request.params ?? {},
              query: Object.fromEntries(new URL(request.url).searchParams),
              ...(request.body === undefined ? {} : { body: { string: request.body } }),
            },
          },
        },
      ],
      triggerMetadata: {},
    },
    log: (level, category, message) => logs.push({ level, category, message }),
  };
  const model = programmingModel.getInvocationModel(coreContext);
  const { context, inputs } = await model.getArguments();
  const result = await model.invokeFunction(context, inputs, found.callback);
  const response = await model.getResponse(context, result);
  const http = response.returnValue.http;
  const bytes = http.body?.bytes;
  return { status: Number(http.statusCode), headers: http.headers, body: bytes === undefined ? "" : Buffer.from(bytes).toString("utf8") };
}

globalThis.functionsCoreStandIn = { functions, hooks, logs, invoke };
