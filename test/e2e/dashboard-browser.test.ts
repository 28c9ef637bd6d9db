import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServe, startStoreProcess, type ServeProcess, type StoreProcess } from "../chaos/service-processes.js";
import { launchChromium, type Browser } from "../helpers/chromium.js";
import { CliProcess, type CliEvent } from "../helpers/sdk-cli-process.js";

/**
 * The dashboard in a real Chromium, against `ha-module serve` (what `npm start` runs) with
 * the store as its own process (so it can be frozen), a function key, two real `elect`
 * processes and two `join` processes. The page is opened as an operator would, with the key
 * in `?code=`. Bounds are generous for a loaded 2-core machine; nothing is compared
 * pixel-wise. HA_DASHBOARD_SCREENSHOT=<path> also writes the screenshot there (docs/dashboard.png).
 */
const I = 400;
const T = 2500;
const KEY = "dashboard-test-key";
const ROLE = "scheduler";
const GROUP = "workers";
/** How long the page may take to show a change: a few refreshes on a loaded machine. */
const SHOWN_WITHIN_MS = 15_000;

/** The little of the DOM the functions run in the page use (the tests compile without lib "dom"). */
interface PageGlobals {
  readonly document: {
    querySelector(css: string): { readonly textContent: string | null } | null;
    readonly activeElement: { readonly textContent: string | null } | null;
  };
  getComputedStyle(element: unknown): { readonly backgroundColor: string };
}

describe("the dashboard in a real Chromium", () => {
  let dir: string;
  let store: StoreProcess;
  let serve: ServeProcess;
  let browser: Browser;
  let page: Page;
  const electors: CliProcess[] = [];
  const members: CliProcess[] = [];
  const pageErrors: string[] = [];
  const clientEnv = { HA_API_KEY: KEY };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "ha-dashboard-"));
    // Chromium starts while the services do: the test stays well under a minute.
    const launching = launchChromium();
    launching.catch(() => undefined);
    store = await startStoreProcess(join(dir, "azurite"), 0, join(dir, "azurite.out"));
    serve = await startServe({
      port: 0,
      dataDir: join(dir, "serve"),
      intervalMs: I,
      timeoutMs: T,
      connectionString: store.connectionString,
      outFile: join(dir, "serve.out"),
      env: { HA_API_KEY: KEY },
    });
    for (const name of ["p1", "p2"]) electors.push(new CliProcess(name, ["elect", ROLE, "--address", `${name}.internal:5800`, "--endpoint", serve.url], clientEnv));
    for (const name of ["n1", "n2"]) members.push(new CliProcess(name, ["join", GROUP, "--member", name, "--address", `${name}.internal:7000`, "--endpoint", serve.url], clientEnv));
    browser = await launching;
    page = await browser.context.newPage();
    page.on("pageerror", (error) => pageErrors.push(`page error: ${error.message}`));
    page.on("console", (message) => {
      // Failed answers are recorded with their address below.
      if (message.type() === "error" && !message.text().startsWith("Failed to load resource")) pageErrors.push(`console: ${message.text()}`);
    });
    page.on("response", (response) => {
      if (response.status() >= 400) pageErrors.push(`${response.status()} ${new URL(response.url()).pathname}`);
    });
    // Opened at the address `ha-module serve` prints (docs/dashboard.md), the key filled in as an operator would.
    const printed = /^ {2}dashboard: (\S+)$/m.exec(readFileSync(join(dir, "serve.out"), "utf8"))?.[1];
    expect(printed).toBe(`${serve.url}/dashboard?code=<HA_API_KEY>`);
    const answer = await page.goto(printed!.replace("<HA_API_KEY>", encodeURIComponent(KEY)));
    expect(answer?.status()).toBe(200);
  });

  afterAll(async () => {
    await browser?.close();
    await Promise.all([...electors, ...members].map((child) => child.kill()));
    serve?.process.expectExit();
    serve?.process.signal("SIGTERM");
    await serve?.process.exited;
    store?.process.expectExit();
    store?.process.signal("SIGCONT");
    store?.process.signal("SIGTERM");
    await store?.process.exited;
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  const roleCell = (cell: string): string => `#roles tr[data-utype="${ROLE}"] .${cell}`;
  const text = (selector: string): Promise<string> => page.locator(selector).first().innerText();

  /** Waits until the element's text satisfies `pattern` (a regex source), checked in the page. */
  async function waitForText(selector: string, pattern: string): Promise<string> {
    await page.waitForFunction(
      ([css, source]) => new RegExp(source as string).test((globalThis as unknown as PageGlobals).document.querySelector(css as string)?.textContent ?? ""),
      [selector, pattern],
      { timeout: SHOWN_WITHIN_MS, polling: 50 },
    );
    return text(selector);
  }

  async function elected(from: Map<CliProcess, number> = new Map()): Promise<{ who: CliProcess; event: CliEvent }> {
    return Promise.any(
      electors.map(async (who) => ({ who, event: await who.waitFor((e) => e.event === "elected", { from: from.get(who) ?? 0, timeoutMs: 20_000 }) })),
    );
  }

  it("shows the role an elect process holds: its primary, address and epoch", async () => {
    const { who, event } = await elected();
    await waitForText(roleCell("primary"), `^${event["uuid"] as string}$`);
    expect(await text(roleCell("address"))).toBe(`${who.name}.internal:5800`);
    expect(await text(roleCell("epoch"))).toBe(String(event["epoch"]));
    expect(await text(roleCell("state"))).toContain("held");
    await waitForText("#status", "^Live · updated");
  });

  it("counts the lease down live, between refreshes, within (0, T]", async () => {
    // On a busy machine a renewal or a refresh can come late, and the page then rightly
    // shows the lease as expired until the next one: that is the only other text allowed.
    await waitForText(roleCell("countdown"), "^\\d+\\.\\d s$");
    const seen: number[] = [];
    for (let sample = 0; sample < 80 && seen.length < 8; sample += 1) {
      const shown = await text(roleCell("countdown"));
      expect(shown).toMatch(/^(\d+\.\d s|expired)$/);
      if (shown !== "expired") seen.push(Number.parseFloat(shown));
      await page.waitForTimeout(90);
    }
    expect(seen).toHaveLength(8);
    console.log(`dashboard countdown samples (s): ${seen.join(", ")}`);
    expect(new Set(seen).size).toBeGreaterThan(2);
    for (const value of seen) {
      expect(value).toBeGreaterThan(0);
      expect(value).toBeLessThanOrEqual(T / 1000);
    }
    // The timer role is what tells assistive technology that this text counts down.
    expect(await page.locator(roleCell("countdown")).getAttribute("role")).toBe("timer");
  });

  it("opens the role's term history from the keyboard (Tab to the role, Enter), as the history route answers", async () => {
    await page.locator("body").focus();
    await page.keyboard.press("Tab"); // the skip link
    await page.keyboard.press("Tab"); // the first role's button
    expect(await page.evaluate(() => (globalThis as unknown as PageGlobals).document.activeElement?.textContent)).toBe(ROLE);
    await page.keyboard.press("Enter");
    const button = page.locator(`#roles tr[data-utype="${ROLE}"] button`);
    expect(await button.getAttribute("aria-expanded")).toBe("true");
    expect(await page.locator("#history").isVisible()).toBe(true);
    await waitForText("#history-heading", `^Term history of ${ROLE}$`);

    const answer = await fetch(`${serve.url}/primary/${ROLE}/history`, { headers: { "x-functions-key": KEY } });
    if (answer.status === 404) {
      // A service without the history route: the page says so instead of failing.
      await waitForText("#history-body", "answered 404");
    } else {
      expect(answer.status).toBe(200);
      const history = (await answer.json()) as { terms: { epoch: number }[] };
      await page.waitForSelector("#history-body tbody tr", { timeout: SHOWN_WITHIN_MS });
      const newest = await page.locator("#history-body tbody tr").first().getAttribute("data-epoch");
      expect(Number(newest)).toBe(history.terms[0]?.epoch);
    }
    // Focus stayed on the role, so the next refreshes do not throw a keyboard user out.
    await page.waitForTimeout(3 * I);
    expect(await page.evaluate(() => (globalThis as unknown as PageGlobals).document.activeElement?.textContent)).toBe(ROLE);
  });

  it("after SIGKILL of the primary, shows the new primary with a higher epoch", async () => {
    const oldUuid = await text(roleCell("primary"));
    const oldEpoch = Number(await text(roleCell("epoch")));
    const primary = electors.find((elector) => elector.events.some((e) => e.event === "elected" && e["uuid"] === oldUuid));
    expect(primary).toBeDefined();
    const marks = new Map(electors.map((elector) => [elector, elector.events.length]));
    const killedAt = performance.now();
    primary!.signal("SIGKILL");
    const { who, event } = await elected(marks);
    expect(who).not.toBe(primary);
    await waitForText(roleCell("primary"), `^${event["uuid"] as string}$`);
    const shownAfterMs = performance.now() - killedAt;
    const newEpoch = Number(await text(roleCell("epoch")));
    console.log(`dashboard: SIGKILL of the primary → new primary on the page after ${Math.round(shownAfterMs)} ms (I=${I} T=${T}); epoch ${oldEpoch} → ${newEpoch}`);
    expect(newEpoch).toBeGreaterThan(oldEpoch);
    expect(newEpoch).toBe(event["epoch"]);
    expect(await text(roleCell("address"))).toBe(`${who.name}.internal:5800`);
    await waitForText("#announcer", `Role ${ROLE}: new primary ${who.name}\\.internal:5800, epoch ${newEpoch}\\.`);
  });

  it("shows a member's state change, in words as well as colour", async () => {
    const member = (name: string): string => `#groups section[data-group="${GROUP}"] tr[data-member="${name}"] .state`;
    await waitForText(member("n1"), "active");
    await waitForText(member("n2"), "active");
    members[0]!.signal("SIGTERM"); // a graceful stop says goodbye: leaving at once
    await waitForText(member("n1"), "leaving");
    expect(await text(member("n2"))).toContain("active");
    const colour = (css: string): Promise<string> =>
      page.locator(`${css} .badge`).evaluate((badge) => (globalThis as unknown as PageGlobals).getComputedStyle(badge).backgroundColor);
    const colours = [await colour(member("n1")), await colour(member("n2"))];
    expect(colours[0]).not.toBe(colours[1]);
    // The change was announced to screen readers in the polite live region.
    await waitForText("#announcer", `${GROUP}: n1 is leaving`);
  });

  it("writes a screenshot of the live page", async () => {
    const path = join(dir, "dashboard.png");
    await page.screenshot({ path, fullPage: true });
    const png = readFileSync(path);
    expect(png.subarray(1, 4).toString("latin1")).toBe("PNG");
    expect(png.length).toBeGreaterThan(10_000);
    const docsCopy = process.env["HA_DASHBOARD_SCREENSHOT"];
    if (docsCopy !== undefined && docsCopy !== "") await page.screenshot({ path: docsCopy, fullPage: true });
  });

  it("keeps a role whose primary stepped down on the page, as vacant with its last epoch", async () => {
    const epoch = await text(roleCell("epoch"));
    const holder = electors.find((elector) => elector.child.exitCode === null && elector.child.signalCode === null)!;
    holder.signal("SIGTERM"); // a graceful stop releases the lease: no primary at once
    await waitForText(roleCell("state"), "vacant");
    expect(await text(roleCell("primary"))).toBe("—");
    expect(await text(roleCell("countdown"))).toBe("no lease");
    expect(await text(roleCell("epoch"))).toBe(epoch);
    await waitForText("#announcer", `Role ${ROLE} has no primary\\.`);
  });

  it("shows a clear banner while the service answers 503, and clears it when the service is back", async () => {
    store.process.signal("SIGSTOP");
    try {
      await waitForText("#banner", "^Service unavailable \\(503 StoreUnavailable\\)");
      expect(await page.locator("#banner").getAttribute("role")).toBe("alert");
      expect(await text("#banner")).toContain("is not live");
      expect(await text("#status")).toMatch(/^Not live/);
    } finally {
      store.process.signal("SIGCONT");
    }
    await page.waitForSelector("#banner", { state: "hidden", timeout: SHOWN_WITHIN_MS });
    expect(await text("#status")).toMatch(/^Live · updated/);
  });

  it("ran without a script error or a Content-Security-Policy violation in the page", () => {
    // 503s while the store was frozen, and a 404 from a service without the history route,
    // are answers the page handles; nothing else failed, not even a request for an icon.
    expect(pageErrors.filter((line) => !/^503 \/api\/|^404 \/api\/primary\/[^/]+\/history$/.test(line))).toEqual([]);
  });
});
