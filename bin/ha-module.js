#!/usr/bin/env node
/**
 * The `ha-module` command (package.json "bin"). It is a source file, not build output, so
 * that npm links it on a fresh clone before anything is built (a bin whose file does not
 * exist yet is not linked, and npx then says "ha-module: not found"). It runs the compiled
 * command line in this same process, and says what to do when that is not built yet.
 *
 * Started by npm (`npx ha-module …`, `npm exec`, an npm script), this process is not the
 * one a service manager signals: npm runs it behind `sh -c`, and on SIGTERM npm passes the
 * signal to that shell only, which dies without passing it on, so `run` would live on,
 * re-parented to pid 1, holding its lease and its command. So under npm it follows its
 * parent: once the parent is gone it stops as if the SIGTERM had reached it (`run`
 * stops its command and releases the lease). A service manager should still start the
 * installed binary or `node dist/shared/cli/main.js` directly (docs/cli.md, "Under a service manager").
 */
import { existsSync } from "node:fs";
import process from "node:process";
import { clearInterval, setInterval } from "node:timers";
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
if (process.env.npm_lifecycle_event !== undefined && process.platform !== "win32") followParent();
await import(cli.href);

/** Raises SIGTERM in this process once the process that started it has exited (checked every 200 ms). */
function followParent() {
  const parent = process.ppid;
  const watch = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(watch);
    process.kill(process.pid, "SIGTERM");
  }, 200);
  watch.unref();
}
