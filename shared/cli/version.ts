import { readFileSync } from "node:fs";

/**
 * The version of the installed ha-module: the `version` of the nearest package.json named
 * ha-module above this file (dist/shared/cli/ when built, shared/cli/ in the sources).
 */
export function packageVersion(): string {
  for (let url = new URL("./package.json", import.meta.url); ; ) {
    try {
      const manifest = JSON.parse(readFileSync(url, "utf8")) as { name?: unknown; version?: unknown };
      if (manifest.name === "ha-module" && typeof manifest.version === "string") return manifest.version;
    } catch {
      // not here: look one directory up
    }
    const parent = new URL("../package.json", url);
    if (parent.href === url.href) return "unknown";
    url = parent;
  }
}
