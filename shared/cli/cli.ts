/**
 * The `ha-module` command line, whichever program runs it: every command is one row of
 * COMMANDS, its spec (what --help shows and the parser accepts) and what runs it. `serve`
 * is given by the composition root: the repository's (main.ts) loads the local host and
 * the functions app; the installed client's and the single executable's (client-main.ts)
 * have no server in them and say where to run one.
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

/** Runs `serve`: the one command whose code only the repository has. */
export type ServeCommand = (line: CommandLine, env: NodeJS.ProcessEnv) => Promise<number>;

interface Command {
  readonly spec: CommandSpec;
  run(line: CommandLine, env: NodeJS.ProcessEnv): Promise<number>;
}

function commandTable(serve: ServeCommand): readonly Command[] {
  return [
    { spec: serveSpec, run: serve },
    { spec: primarySpec, run: primaryCommand },
    { spec: electSpec, run: electCommand },
    { spec: runSpec, run: runCommand },
    { spec: releaseSpec, run: releaseCommand },
    { spec: handoverSpec, run: handoverCommand },
    { spec: membersSpec, run: membersCommand },
    { spec: joinSpec, run: joinCommand },
  ];
}

async function main(argv: string[], commands: readonly Command[]): Promise<number> {
  const usage = renderUsage(commands.map((command) => command.spec));
  const [name, ...rest] = argv;
  switch (name) {
    case undefined:
      process.stderr.write(`ha-module: name a command.\n\n${usage}`);
      return EXIT.usage;
    case "help":
    case "--help":
    case "-h": {
      const about = commands.find((command) => command.spec.name === rest[0]);
      process.stdout.write(about === undefined ? usage : renderCommandHelp(about.spec));
      return EXIT.ok;
    }
    case "version":
    case "--version":
    case "-v":
      process.stdout.write(`ha-module ${packageVersion()}\n`);
      return EXIT.ok;
  }
  const command = commands.find((candidate) => candidate.spec.name === name);
  if (command === undefined) {
    process.stderr.write(`ha-module: unknown command ${JSON.stringify(name)}.\n\n${usage}`);
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

/** Runs the command line of this process (process.argv) and sets its exit code. */
export function runCli(serve: ServeCommand): void {
  main(process.argv.slice(2), commandTable(serve)).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      console.error(`ha-module: ${error instanceof Error ? error.message : String(error)}`);
      process.exitCode = EXIT.failure;
    },
  );
}
