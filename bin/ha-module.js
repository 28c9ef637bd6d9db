#!/usr/bin/env node
/**
 * The `ha-module` command (package.json "bin"). It is a source file, not build output, so
 * that npm links it on a fresh clone before anything is built (a bin whose file does not
 * exist yet is not linked, and npx then says "ha-module: not found"). It runs the compiled
 * command line, and says what to do when that is not built yet.
 */
import { existsSync } from "node:fs";
import process from "node:process";
import { URL, fileURLToPath } from "node:url";

const cli = new URL("../dist/shared/cli/main.js", import.meta.url);
if (!existsSync(cli)) {
  const root = fileURLToPath(new URL("..", import.meta.url));
  process.stderr.write(
    `ha-module: the command line is not built yet (${fileURLToPath(cli)} is missing). ` +
      `Run \`npm run build\` in ${root}; \`npm install\` does it for you, unless it ran with --ignore-scripts.\n`,
  );
  process.exit(1);
}
await import(cli.href);
