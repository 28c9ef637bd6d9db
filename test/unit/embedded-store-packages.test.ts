import { describe, expect, it } from "vitest";
import { ConfigError } from "../../shared/config/config-error.js";
import { loadAzurite } from "../../shared/host/embedded-azurite.js";
import { loadCosmosEmulator } from "../../shared/host/embedded-cosmos.js";

/**
 * `ha-module serve` in a project that installed ha-module: the embedded stores' packages are
 * ha-module's dev dependencies, so they are missing there. The message must say what to
 * install (not "run npm install", which changes nothing) or which setting avoids them.
 */
const missing = ((id: string) => {
  throw Object.assign(new Error(`Cannot find module '${id}'`), { code: "MODULE_NOT_FOUND" });
}) as unknown as NodeJS.Require;

describe("an embedded store whose package is not installed", () => {
  it("Azurite: names the package to install and the settings that point at another store", () => {
    const error = (() => {
      try {
        loadAzurite(missing);
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).setting).toBe("HA_TABLE_CONNECTION_STRING");
    expect((error as Error).message).toMatch(/`npm install --save-dev azurite`/);
    expect((error as Error).message).toMatch(/HA_TABLE_CONNECTION_STRING .* or HA_TABLE_ENDPOINT/);
    expect((error as Error).message).not.toMatch(/run `npm install`/);
  });

  it("the Cosmos emulator: names @vercel/cosmosdb-server, or HA_COSMOS_ENDPOINT", () => {
    expect(() => loadCosmosEmulator(missing)).toThrow(/`npm install --save-dev @vercel\/cosmosdb-server`\. Or set HA_COSMOS_ENDPOINT/);
  });

  it("any other failure to load is not disguised as a missing package", () => {
    const broken = (() => {
      throw new SyntaxError("Unexpected token");
    }) as unknown as NodeJS.Require;
    expect(() => loadAzurite(broken)).toThrow(SyntaxError);
  });
});
