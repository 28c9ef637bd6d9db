import { readFileSync } from "node:fs";

/**
 * Set by the bundles' build (scripts/client-bundles.mjs) to the version they are built
 * from: the single executable has no package.json to read, nor a file of its own.
 */
declare const __HA_MODULE_VERSION__: string | undefined;

/**
 * The version of the installed ha-module: the `version` of the nearest package.json named
 * ha-module above this file (dist/shared/config/ when built, shared/config/ in the sources), or
 * the one a bundle was built with; the CLI prints it, the OpenAPI document states it.
 */
export function packageVersion(): string {
  if (typeof __HA_MODULE_VERSION__ === "string") return __HA_MODULE_VERSION__;
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
