#!/usr/bin/env node
/**
 * The `ha-module` binary: the composition root of the command line, and the one file in
 * shared/ that imports functions/ (the route table, which `serve` puts on the local host).
 */
import { operations } from "../../functions/routes.js";
import { timers } from "../../functions/timers.js";
import { electCommand } from "./elect.js";
import { joinCommand } from "./join.js";
import { membersCommand } from "./members.js";
import { primaryCommand } from "./primary.js";
import { runCommand } from "./run.js";
import { serveCommand } from "./serve.js";
import { USAGE, UsageError } from "./usage.js";

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case "serve":
        if (rest.length > 0) throw new UsageError(`serve takes no arguments; it is configured by environment (got ${rest.join(" ")}).`);
        return await serveCommand(process.env, operations, timers);
      case "primary":
        return await primaryCommand(rest, process.env);
      case "elect":
        return await electCommand(rest, process.env);
      case "run":
        return await runCommand(rest, process.env);
      case "members":
        return await membersCommand(rest, process.env);
      case "join":
        return await joinCommand(rest, process.env);
      case "help":
      case "--help":
      case "-h":
        process.stdout.write(USAGE);
        return 0;
      default:
        throw new UsageError(command === undefined ? "Name a command." : `Unknown command ${JSON.stringify(command)}.`);
    }
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`ha-module: ${error.message}\n\n${USAGE}`);
    return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(`ha-module: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 1;
  },
);
