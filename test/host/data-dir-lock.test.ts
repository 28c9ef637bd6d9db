import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdir, mkdtemp, realpath, rm, stat, symlink, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DataDirInUseError } from "../../shared/host/data-dir-in-use-error.js";
import { lockDataDir, type DataDirLock } from "../../shared/host/data-dir-lock.js";

describe.each([
  { kind: "the platform's own lock", platform: undefined },
  { kind: "a socket file (macOS, BSD)", platform: "darwin" as const },
])("lockDataDir with $kind", ({ platform }) => {
  let dir: string;
  const held: DataDirLock[] = [];
  const lock = async (path: string): Promise<DataDirLock> => {
    const taken = await lockDataDir(path, { platform, askTimeoutMs: 500 });
    held.push(taken);
    return taken;
  };

  beforeEach(async () => {
    dir = await realpath(await mkdtemp(join(tmpdir(), "ha-dirlock-")));
  });
  afterEach(async () => {
    await Promise.all(held.splice(0).map((taken) => taken.release()));
    await rm(dir, { recursive: true, force: true });
  });

  it("refuses a second lock on the directory, naming the holder's pid, until the first is released", async () => {
    const first = await lock(dir);
    const refused = await lockDataDir(dir, { platform }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(DataDirInUseError);
    expect((refused as DataDirInUseError).holder?.pid).toBe(process.pid);
    expect((refused as Error).message).toContain(`HA_DATA_DIR ${dir} is in use`);
    expect((refused as Error).message).toContain(`pid ${process.pid}`);

    await first.release();
    await lock(dir);
  });

  it("sees the same directory through a symbolic link", async () => {
    await lock(dir);
    const alias = join(await realpath(tmpdir()), `ha-dirlock-alias-${process.pid}-${Date.now()}`);
    await symlink(dir, alias);
    try {
      await expect(lockDataDir(alias, { platform })).rejects.toBeInstanceOf(DataDirInUseError);
    } finally {
      await rm(alias);
    }
  });

  it("lets two different directories be locked at once", async () => {
    const other = join(dir, "other");
    await mkdir(other);
    await lock(dir);
    await lock(other);
  });

  it("is not blocked by the lock of a process that was SIGKILLed", async () => {
    // A child takes the lock the same way (the built module: `npm test` builds first),
    // then dies without any chance to clean up.
    const moduleUrl = new URL("../../dist/shared/host/data-dir-lock.js", import.meta.url).href;
    const child = spawn(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `const { lockDataDir } = await import(${JSON.stringify(moduleUrl)});
         await lockDataDir(${JSON.stringify(dir)}, { platform: ${JSON.stringify(platform ?? process.platform)} });
         setInterval(() => undefined, 1000);
         console.log("locked");`,
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let output = "";
    child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const locked = await Promise.race([once(child.stdout!, "data").then(() => true), once(child, "exit").then(() => false)]);
    expect(locked, output).toBe(true);
    await expect(lockDataDir(dir, { platform })).rejects.toBeInstanceOf(DataDirInUseError);
    const exited = once(child, "exit");
    child.kill("SIGKILL");
    await exited;
    await lock(dir);
  });

  it("counts a listener that never says who it is as a holder", async () => {
    const taken = await lock(dir);
    // Replace our answering server by a silent one on the same address.
    await taken.release();
    held.splice(0);
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen({ path: taken.address }, resolve));
    try {
      const refused = await lockDataDir(dir, { platform, askTimeoutMs: 200 }).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(DataDirInUseError);
      expect((refused as DataDirInUseError).holder).toBeUndefined();
      expect((refused as Error).message).toContain("did not say who it is");
    } finally {
      silent.close();
    }
  });
});

/** Starts `node -e code` and resolves once it prints its first line; it lives until killed. */
async function startHelper(code: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ["--input-type=module", "-e", code], { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const started = await Promise.race([once(child.stdout!, "data").then(() => true), once(child, "exit").then(() => false)]);
  expect(started, output).toBe(true);
  return child;
}

async function killHard(child: ChildProcess): Promise<void> {
  const exited = once(child, "exit");
  child.kill("SIGKILL");
  await exited;
}

const BUILT_LOCK = new URL("../../dist/shared/host/data-dir-lock.js", import.meta.url).href;

describe("lockDataDir with a socket file", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await realpath(await mkdtemp(join(tmpdir(), "ha-dirlock-")));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** Leaves socket files at `paths` that nothing answers on: their process was SIGKILLed. */
  async function leaveStaleSockets(...paths: string[]): Promise<void> {
    const listeners = paths.map((path) => `await new Promise((resolve) => net.createServer().listen(${JSON.stringify(path)}, resolve));`);
    await killHard(await startHelper(`const net = await import("node:net"); ${listeners.join(" ")} console.log("up"); setInterval(() => 0, 1000);`));
  }

  it("gives a stale lock to exactly one of several services that start at the same moment", async () => {
    for (let round = 0; round < 3; round += 1) {
      const roundDir = join(dir, `round${round}`);
      await mkdir(roundDir);
      await leaveStaleSockets(join(roundDir, ".serve.lock"));
      const go = join(roundDir, "go");
      // Each contender waits for the go file, so they all find the stale lock at once.
      const contenders = await Promise.all(
        Array.from({ length: 5 }, () =>
          startHelper(
            `const { lockDataDir } = await import(${JSON.stringify(BUILT_LOCK)});
             const { existsSync } = await import("node:fs");
             console.log("ready");
             while (!existsSync(${JSON.stringify(go)})) await new Promise((resolve) => setTimeout(resolve, 2));
             const outcome = await lockDataDir(${JSON.stringify(roundDir)}, { platform: "darwin" }).then(() => "won", () => "lost");
             console.log(outcome);
             setInterval(() => 0, 1000);`,
          ),
        ),
      );
      const outcomes = contenders.map(
        (child) =>
          new Promise<string>((resolve) => {
            child.stdout!.on("data", (chunk: Buffer) => {
              const line = chunk.toString().trim();
              if (line === "won" || line === "lost") resolve(line);
            });
          }),
      );
      await writeFile(go, "");
      const results = await Promise.all(outcomes);
      await Promise.all(contenders.map(killHard));
      expect(results.filter((outcome) => outcome === "won"), `round ${round}: ${results.join(", ")}`).toHaveLength(1);
    }
  });

  it("recovers when a service died while it was replacing a stale lock", async () => {
    await leaveStaleSockets(join(dir, ".serve.lock"), join(dir, ".serve.lock.takeover"));
    const taken = await lockDataDir(dir, { platform: "darwin" });
    await taken.release();
  });


  it("keeps the socket file inside the directory, and refuses a directory whose path is too long for it", async () => {
    const taken = await lockDataDir(dir, { platform: "darwin" });
    expect(taken.address).toBe(join(dir, ".serve.lock"));
    expect((await stat(taken.address)).isSocket()).toBe(true);
    await taken.release();

    const deep = join(dir, "d".repeat(100));
    await mkdir(deep);
    await expect(lockDataDir(deep, { platform: "darwin" })).rejects.toThrow(/too long a path for its lock.*shorter HA_DATA_DIR/);
  });
});
