#!/usr/bin/env node
/**
 * The `ha-module` binary: the composition root of the command line, and the one file in
 * shared/ that imports functions/ (the route table, which `serve` puts on the local host;
 * imported only when serving).
 * Every command is one row of COMMANDS: its spec (what --help shows and the parser
 * accepts) and what runs it.
 */
import { parseCommandLine, type CommandLine, type CommandSpec } from "./command-spec.js";
import { electCommand, electSpec } from "./commands/elect.js";
import { EXIT } from "./exit-codes.js";
import { joinCommand, joinSpec } from "./commands/join.js";
import { membersCommand, membersSpec } from "./commands/members.js";
import { primaryCommand, primarySpec } from "./commands/primary.js";
import { releaseCommand, releaseSpec } from "./commands/release.js";
import { handoverCommand, handoverSpec } from "./commands/handover.js";
import { runCommand, runSpec } from "./commands/run.js";
import { serveSpec } from "./commands/serve-spec.js";
import { renderCommandHelp, renderUsage, renderUsageLine } from "./usage.js";
import { UsageError } from "./usage-error.js";
import { packageVersion } from "../config/package-version.js";

interface Command {
  readonly spec: CommandSpec;
  run(line: CommandLine, env: NodeJS.ProcessEnv): Promise<number>;
}

const COMMANDS: readonly Command[] = [
  { spec: serveSpec, run: async (line, env) => serve(line, env) },
  { spec: primarySpec, run: primaryCommand },
  { spec: electSpec, run: electCommand },
  { spec: runSpec, run: runCommand },
  { spec: releaseSpec, run: releaseCommand },
  { spec: handoverSpec, run: handoverCommand },
  { spec: membersSpec, run: membersCommand },
  { spec: joinSpec, run: joinCommand },
];

/**
 * Loaded only when serving: the server's modules take a second or two to load, and a
 * worker that installed ha-module with --omit=optional has none of the Azure packages
 * they need, which the message says instead of Node's "Cannot find package".
 */
async function serve(line: CommandLine, env: NodeJS.ProcessEnv): Promise<number> {
  const server = await Promise.all([import("./commands/serve.js"), import("../../functions/routes.js"), import("../../functions/timers.js")]).catch(reportMissingServerPackage);
  if (server === undefined) return EXIT.failure;
  const [{ serveCommand }, { operations }, { timers }] = server;
  return serveCommand(line, env, operations, timers);
}

function reportMissingServerPackage(error: unknown): undefined {
  const missing = /Cannot find (?:package|module) '([^']+)'/.exec(error instanceof Error ? error.message : "")?.[1];
  if ((error as NodeJS.ErrnoException).code !== "ERR_MODULE_NOT_FOUND" || missing === undefined) throw error;
  process.stderr.write(
    `ha-module: serve needs the Azure packages that ha-module lists as optional dependencies, and ${missing} is not installed ` +
      "(was ha-module installed with --omit=optional, as a worker needs?). Install them with `npm install ha-module` " +
      "without --omit=optional, or run the service from a clone of ha-module (`npm start`).\n",
  );
  return undefined;
}

const USAGE = renderUsage(COMMANDS.map((command) => command.spec));

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  switch (name) {
    case undefined:
      process.stderr.write(`ha-module: name a command.\n\n${USAGE}`);
      return EXIT.usage;
    case "help":
    case "--help":
    case "-h": {
      const about = COMMANDS.find((command) => command.spec.name === rest[0]);
      process.stdout.write(about === undefined ? USAGE : renderCommandHelp(about.spec));
      return EXIT.ok;
    }
    case "version":
    case "--version":
    case "-v":
      process.stdout.write(`ha-module ${packageVersion()}\n`);
      return EXIT.ok;
  }
  const command = COMMANDS.find((candidate) => candidate.spec.name === name);
  if (command === undefined) {
    process.stderr.write(`ha-module: unknown command ${JSON.stringify(name)}.\n\n${USAGE}`);
    return EXIT.usage;
  }
  try {
    const line = parseCommandLine(command.spec, rest);
    if (line === "help") {
      process.stdout.write(renderCommandHelp(command.spec));
      return EXIT.ok;
    }
    return await command.run(line, process.env);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`ha-module ${name}: ${error.message}\n${renderUsageLine(command.spec)}`);
    return EXIT.usage;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(`ha-module: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = EXIT.failure;
  },
);
