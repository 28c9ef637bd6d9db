#!/usr/bin/env node
import { serveCommand } from "./serve.js";

const USAGE = `Usage: ha-module <command>

Commands:
  serve     run the lease service locally (the same as npm start)
`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === "serve" && rest.length === 0) return serveCommand(process.env);
  if (command === "--help" || command === "-h" || command === "help") {
    process.stdout.write(USAGE);
    return 0;
  }
  process.stderr.write(USAGE);
  return 2;
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
