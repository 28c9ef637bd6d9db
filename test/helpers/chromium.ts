import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext } from "playwright-core";

/** Debian's Chromium; HA_CHROMIUM names another binary. */
export const CHROMIUM_PATH = process.env["HA_CHROMIUM"] ?? "/usr/bin/chromium";

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
 * A real Chromium with a fresh profile. A missing browser is a failure that says how to
 * install it, never a skipped test: the dashboard's promises are only kept if they are run.
 */
export async function launchChromium(executablePath = CHROMIUM_PATH): Promise<Browser> {
  if (!existsSync(executablePath)) {
    throw new Error(
      `The dashboard's browser test needs Chromium at ${executablePath}, which is missing. ` +
        "Install it with `sudo apt-get install -y chromium` (Debian, Ubuntu; .ci/run does this in CI), " +
        "or set HA_CHROMIUM to the path of a Chromium or Chrome binary.",
    );
  }
  const profile = mkdtempSync(join(tmpdir(), "ha-chromium-"));
  // A persistent context is how Playwright takes a profile directory of our choosing.
  const context = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    args: ARGS,
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
}
