#!/usr/bin/env node
/**
 * The `ha-module` binary of the repository (`npm start`, `npx ha-module` in a clone): the
 * command line of cli.ts with `serve`, and the one file in shared/ that imports functions/
 * (the route table, which `serve` puts on the local host). The installed client and the
 * single executable run client-main.ts instead, which has no server in it.
 */
import { runCli } from "./cli.js";
import type { CommandLine } from "./command-spec.js";

/** Loaded only when serving: the server's modules (the Azure SDKs, the embedded stores) take a second or two to load. */
async function serve(line: CommandLine, env: NodeJS.ProcessEnv): Promise<number> {
  const [{ serveCommand }, { operations }, { timers }] = await Promise.all([import("./commands/serve.js"), import("../../functions/routes.js"), import("../../functions/timers.js")]);
  return serveCommand(line, env, operations, timers);
}

runCli(serve);
