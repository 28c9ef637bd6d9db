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
 * the store as its own process (so it can be frozen), a function key, three real `elect`
 * processes and two `join` processes. The page is opened as an operator would, with the key
 * in `?code=`, in a browser whose wall clock is an hour ahead of the service's (durations
 * must come from the service's clock). Bounds are generous for a loaded 2-core machine;
 * nothing is compared pixel-wise. HA_DASHBOARD_SCREENSHOT=<path> also writes the screenshot
 * there (docs/dashboard.png).
 */
const I = 400;
const T = 2500;
const KEY = "dashboard-test-key";
const ROLE = "scheduler";
const GROUP = "workers";
/** How long the page may take to show a change: a few refreshes on a loaded machine. */
const SHOWN_WITHIN_MS = 15_000;
/** How far the browser's wall clock is ahead of the service's. */
const BROWSER_CLOCK_AHEAD_MS = 3_600_000;

/** An element, as little of it as the functions run in the page use. */
interface HTMLLike {
  readonly textContent: string | null;
  getAttribute(name: string): string | null;
  querySelector(css: string): HTMLLike | null;
  querySelectorAll(css: string): Iterable<HTMLLike>;
}

/** An element as the functions run in the page read it. */
interface PageElement {
  readonly textContent: string | null;
  readonly firstChild: { readonly textContent: string | null } | null;
  getAttribute(name: string): string | null;
  querySelector(css: string): PageElement | null;
}

/** The little of the DOM the functions run in the page use (the tests compile without lib "dom"). */
interface PageGlobals {
  readonly document: {
    querySelector(css: string): PageElement | null;
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
    for (const name of ["p1", "p2", "p3"]) electors.push(new CliProcess(name, ["elect", ROLE, "--address", `${name}.internal:5800`, "--endpoint", serve.url], clientEnv));
    for (const name of ["n1", "n2"]) members.push(new CliProcess(name, ["join", GROUP, "--member", name, "--address", `${name}.internal:7000`, "--endpoint", serve.url], clientEnv));
    browser = await launching;
    page = await browser.context.newPage();
    // The browser's wall clock runs an hour ahead of the service's: what the page shows as a
    // duration (vacant for, seen ago) must not depend on it.
    await page.addInitScript((aheadMs) => {
      const RealDate = Date;
      class AheadDate extends RealDate {
        constructor(...args: unknown[]) {
          if (args.length === 0) super(RealDate.now() + aheadMs);
          else super(...(args as [string]));
        }
        static override now(): number {
          return RealDate.now() + aheadMs;
        }
      }
      (globalThis as unknown as { Date: DateConstructor }).Date = AheadDate as DateConstructor;
    }, BROWSER_CLOCK_AHEAD_MS);
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

  /** The uuid of the primary the page shows (the cell's data-uuid), "" while it shows none. */
  const shownHolder = async (): Promise<string> => (await page.locator(roleCell("primary")).first().getAttribute("data-uuid")) ?? "";

  /**
   * Waits until the page shows `uuid` as the primary: the cell leads with its address (what an
   * operator looks for), then the uuid's first 8 characters, with all of it on hover.
   */
  async function waitForHolder(uuid: string, address: string): Promise<void> {
    await page.waitForFunction(
      (css) => (globalThis as unknown as PageGlobals).document.querySelector(css) !== null,
      `${roleCell("primary")}[data-uuid="${uuid}"]`,
      { timeout: SHOWN_WITHIN_MS, polling: 50 },
    );
    const cell = await page.evaluate((css) => {
      const element = (globalThis as unknown as PageGlobals).document.querySelector(css);
      return { text: element?.textContent ?? "", first: element?.firstChild?.textContent ?? "", title: element?.querySelector("code")?.getAttribute("title") ?? null };
    }, roleCell("primary"));
    expect(cell.first).toBe(address);
    expect(cell.text).toBe(`${address} ${uuid.slice(0, 8)}…`);
    expect(cell.title).toBe(uuid);
  }

  /** Waits until the element's text satisfies `pattern` (a regex source), checked in the page. */
  async function waitForText(selector: string, pattern: string, timeout = SHOWN_WITHIN_MS): Promise<string> {
    await page.waitForFunction(
      ([css, source]) => new RegExp(source as string).test((globalThis as unknown as PageGlobals).document.querySelector(css as string)?.textContent ?? ""),
      [selector, pattern],
      { timeout, polling: 50 },
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
    await waitForHolder(event["uuid"] as string, `${who.name}.internal:5800`);
    expect(await text(roleCell("epoch"))).toBe(String(event["epoch"]));
    expect(await text(roleCell("state"))).toContain("held");
    await waitForText("#status", "^Live · updated");
  });

  it("lists the role's standbys with their addresses and how recently the service saw them", async () => {
    const names = electors.map((elector) => `${elector.name}.internal:5800`);
    /** The row's primary and standbys as one refresh left them (read in one go in the page). */
    const snapshot = (): Promise<{ address: string; uuid: string; standbys: string[] }> =>
      page.evaluate((css) => {
        const row = (globalThis as unknown as { document: { querySelector(css: string): HTMLLike | null } }).document.querySelector(css);
        return {
          address: row?.querySelector(".primary .machine-address")?.textContent ?? "",
          uuid: row?.querySelector(".primary")?.getAttribute("data-uuid") ?? "",
          standbys: [...(row?.querySelectorAll(".standbys li") ?? [])].map((item) => item.textContent ?? ""),
        };
      }, `#roles tr[data-utype="${ROLE}"]`);
    // Every elector is either the primary or listed as a standby. A standby shows once it has
    // announced itself (about every T/2, after its first polls): on a loaded machine, whose
    // service sheds and whose electors start slowly (and whose primary may change meanwhile),
    // that can take longer than a change of primary takes to show. An elector that competed
    // again under a new uuid may be listed twice while its old uuid is still within T.
    const listed = (lines: string[]): string[] => lines.map((line) => line.split(" ")[0]!);
    let seen = await snapshot();
    for (let wait = 0; wait < (2 * SHOWN_WITHIN_MS) / 100; wait += 1) {
      if (seen.uuid !== "" && names.every((name) => name === seen.address || listed(seen.standbys).includes(name))) break;
      await page.waitForTimeout(100);
      seen = await snapshot();
    }
    expect([...new Set([seen.address, ...listed(seen.standbys)])].sort()).toEqual(names.sort());
    for (const line of seen.standbys) {
      // Address, uuid (its first 8 characters), and the age of its last announcement on the service's clock: within T.
      const parts = /^p\d\.internal:5800 (\S+)… seen (\d+\.\d) s ago$/.exec(line);
      expect(parts, line).not.toBeNull();
      expect(Number(parts![2])).toBeLessThanOrEqual(T / 1000);
      // The primary is not its own standby.
      expect(seen.uuid.startsWith(parts![1]!)).toBe(false);
    }
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
    const button = page.locator(`#roles tr[data-utype="${ROLE}"] button.role`);
    expect(await button.getAttribute("aria-expanded")).toBe("true");
    expect(await page.locator("#history").isVisible()).toBe(true);
    await waitForText("#history-heading", `^Term history of ${ROLE}$`);

    // A busy machine may shed this read (503 Overloaded) as it would any: ask again then.
    let answer = await fetch(`${serve.url}/primary/${ROLE}/history`, { headers: { "x-functions-key": KEY } });
    for (let attempt = 0; answer.status === 503 && attempt < 20; attempt += 1) {
      await page.waitForTimeout(I);
      answer = await fetch(`${serve.url}/primary/${ROLE}/history`, { headers: { "x-functions-key": KEY } });
    }
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

  const handoverButton = (): ReturnType<Page["locator"]> => page.locator(`${roleCell("handover-cell")} button.handover`);
  const handoverResult = roleCell("handover-result");

  it("shows a refused handover in words, with the button disabled while the request is out", async () => {
    const holder = await shownHolder();
    let letGo: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (letGo = resolve));
    let requests = 0;
    // The request is held until the button has been checked, and then names a standby the
    // service does not know: the real service answers 409 NoSuchStandby.
    await page.route(`**/api/primary/${ROLE}/handover?*`, async (route) => {
      requests += 1;
      await held;
      await route.continue({ postData: JSON.stringify({ to: "nobody-stands-by" }) });
    });
    try {
      await handoverButton().click();
      await expect.poll(() => requests, { timeout: SHOWN_WITHIN_MS }).toBe(1);
      expect(await handoverButton().getAttribute("aria-disabled")).toBe("true");
      expect(await handoverButton().innerText()).toBe("Handing over…");
      // Playwright itself waits for an aria-disabled button to be enabled again; force the click:
      // the page ignores it while the first is out, so there is still one request.
      await handoverButton().click({ force: true });
      letGo();
      await page.waitForSelector(`${handoverResult}[data-outcome]`, { timeout: SHOWN_WITHIN_MS });
      expect(await text(handoverResult)).toMatch(/Not handed over: 409 NoSuchStandby: to: "nobody-stands-by" names no standby/);
    } finally {
      letGo();
      await page.unroute(`**/api/primary/${ROLE}/handover?*`);
    }
    expect(requests).toBe(1);
    expect(await handoverButton().getAttribute("aria-disabled")).toBeNull();
    expect(await handoverButton().innerText()).toBe("Hand over");
    expect(await shownHolder()).toBe(holder);
  });

  it("hands the role over to the standby chosen, from the keyboard: it becomes primary and the page shows it", async () => {
    const oldUuid = await shownHolder();
    const oldEpoch = Number(await text(roleCell("epoch")));
    const standby = electors.find((elector) => !elector.events.some((e) => e.event === "elected" && e["uuid"] === oldUuid))!;
    const address = `${standby.name}.internal:5800`;
    const select = page.locator(`${roleCell("handover-cell")} select`);
    expect(await select.getAttribute("aria-label")).toBe(`Hand over ${ROLE} to`);
    await page.waitForFunction(
      ([css, wanted]) => [...((globalThis as unknown as PageGlobals).document.querySelector(css as string) as unknown as { options: { text: string }[] }).options].some((option) => option.text.startsWith(wanted as string)),
      [`${roleCell("handover-cell")} select`, address],
      { timeout: SHOWN_WITHIN_MS, polling: 50 },
    );
    const marks = new Map(electors.map((elector) => [elector, elector.events.length]));
    const escaped = address.replace(/\./g, "\\.");
    const accepted = `Asked \\S+ to hand over to ${escaped}: it steps down at its next renewal\\.`;
    // A live standby announces itself every T/2, and the service names only one seen within
    // T/2 + 2·I (docs/protocol.md#standbys): on a loaded machine an announcement can come later
    // than that, and the page then shows the refusal with when it was last seen. That is the
    // documented answer, not this test's subject: ask again (at most three times in all).
    for (let attempt = 1; ; attempt += 1) {
      await select.focus();
      // The latest announcement from that address (the service lists standbys oldest first).
      const value = await select.locator("option", { hasText: address }).last().getAttribute("value");
      await select.selectOption(value!);
      await page.keyboard.press("Tab");
      expect(await page.evaluate(() => ((globalThis as unknown as PageGlobals).document.activeElement as unknown as { ariaLabel: string | null } | null)?.ariaLabel)).toBe(`Hand over ${ROLE}`);
      await page.keyboard.press("Enter");
      const shown = await waitForText(handoverResult, `${accepted}|NoSuchStandby: to: "\\S+" names \\S+ \\(${escaped}\\), a standby of ${ROLE} last seen at`);
      if (new RegExp(accepted).test(shown) || attempt === 3) break;
    }
    await waitForText(handoverResult, accepted);
    await waitForText("#announcer", `Role ${ROLE}: handing over to ${address.replace(/\./g, "\\.")} …`);
    const { who, event } = await elected(marks);
    expect(who).toBe(standby);
    await waitForHolder(event["uuid"] as string, address);
    const newEpoch = event["epoch"] as number;
    expect(newEpoch).toBeGreaterThan(oldEpoch);
    expect(Number(await text(roleCell("epoch")))).toBe(newEpoch);
    expect(await text(roleCell("state"))).toMatch(/held/);
    await waitForText("#announcer", `Role ${ROLE}: new primary ${address.replace(/\./g, "\\.")}, epoch ${newEpoch}\\.`);
  });

  it("shows the role reserved for the standby named, until when, once its primary has released it", async () => {
    // A standby the test plays itself: it announces once (a refused heartbeat with
    // announce) and then stays silent, like one that froze, so the reservation lasts its T.
    const uuid = "frozen-standby";
    const address = "frozen.internal:5800";
    const select = page.locator(`${roleCell("handover-cell")} select`);
    const announced = await fetch(`${serve.url}/primary/${ROLE}`, {
      method: "PUT",
      headers: { "x-functions-key": KEY, "content-type": "application/json" },
      body: JSON.stringify({ uuid, address, announce: true }),
    });
    expect(announced.status).toBe(409); // refused: the role is held
    await page.waitForFunction(
      (css) => [...((globalThis as unknown as PageGlobals).document.querySelector(css) as unknown as { options: { value: string }[] }).options].some((option) => option.value === "frozen-standby"),
      `${roleCell("handover-cell")} select`,
      { timeout: SHOWN_WITHIN_MS, polling: 50 },
    );
    const epoch = Number(await text(roleCell("epoch")));
    await select.selectOption(uuid);
    await handoverButton().click();
    await waitForText(handoverResult, `to hand over to ${address.replace(/\./g, "\\.")}:`);
    // The primary steps down and releases: nobody holds the role, and only the named standby may take it.
    const shown = await waitForText(roleCell("state"), `vacant for \\d+ s · reserved for (frozen\\.internal:5800|${uuid}) until \\d\\d:\\d\\d:\\d\\d`);
    expect(shown).toMatch(/vacant/);
    expect(await text(roleCell("primary"))).toBe("—");
    expect(await shownHolder()).toBe("");
    expect(await page.locator(`#roles tr[data-utype="${ROLE}"]`).getAttribute("data-handover")).toBe("reserved");
    await waitForText("#announcer", `Role ${ROLE}: reserved for`);
    // After T anyone may: one of the electors takes the role at the next epoch.
    await waitForText(roleCell("state"), "held", 2 * SHOWN_WITHIN_MS);
    expect(Number(await text(roleCell("epoch")))).toBeGreaterThan(epoch);
  });

  it("after SIGKILL of the primary, shows the new primary with a higher epoch", async () => {
    const oldUuid = await shownHolder();
    const oldEpoch = Number(await text(roleCell("epoch")));
    const primary = electors.find((elector) => elector.events.some((e) => e.event === "elected" && e["uuid"] === oldUuid));
    expect(primary).toBeDefined();
    const marks = new Map(electors.map((elector) => [elector, elector.events.length]));
    const killedAt = performance.now();
    primary!.signal("SIGKILL");
    const { who, event } = await elected(marks);
    expect(who).not.toBe(primary);
    await waitForHolder(event["uuid"] as string, `${who.name}.internal:5800`);
    const shownAfterMs = performance.now() - killedAt;
    const newEpoch = Number(await text(roleCell("epoch")));
    console.log(`dashboard: SIGKILL of the primary → new primary on the page after ${Math.round(shownAfterMs)} ms (I=${I} T=${T}); epoch ${oldEpoch} → ${newEpoch}`);
    expect(newEpoch).toBeGreaterThan(oldEpoch);
    expect(newEpoch).toBe(event["epoch"]);
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

  it("keeps a role whose primaries all stopped on the page as vacant, for how long on the service's clock", async () => {
    const holderUuid = await shownHolder();
    const alive = electors.filter((elector) => elector.child.exitCode === null && elector.child.signalCode === null);
    const holder = alive.find((elector) => elector.events.some((e) => e.event === "elected" && e["uuid"] === holderUuid))!;
    // The standbys first, so that nobody takes over; then the holder, whose graceful stop releases the lease.
    for (const standby of alive.filter((elector) => elector !== holder)) {
      standby.signal("SIGTERM");
      await standby.exited;
    }
    const epoch = await text(roleCell("epoch"));
    holder.signal("SIGTERM");
    await waitForText(roleCell("state"), "vacant for \\d+ s");
    expect(await text(roleCell("primary"))).toBe("—");
    expect(await shownHolder()).toBe("");
    expect(await text(roleCell("countdown"))).toBe("no lease");
    expect(await text(roleCell("epoch"))).toBe(epoch);
    expect(await page.locator(`#roles tr[data-utype="${ROLE}"]`).getAttribute("data-state")).toBe("vacant");
    await waitForText("#announcer", `Role ${ROLE} has no primary\\.`);

    // How long, on the service's clock: never more than the service says (the browser's clock
    // is an hour ahead), and it grows.
    const shownFor = async (): Promise<number> => Number(/vacant for (\d+) s/.exec(await text(roleCell("state")))![1]);
    const shown = await shownFor();
    const list = (await (await fetch(`${serve.url}/primary?vacant=true`, { headers: { "x-functions-key": KEY } })).json()) as { primaries: { utype: string; vacantSince?: string }[] };
    const vacantSince = list.primaries.find((view) => view.utype === ROLE)?.vacantSince;
    expect(vacantSince).toBeDefined();
    expect(shown).toBeLessThanOrEqual((Date.now() - Date.parse(vacantSince!)) / 1000 + 1);
    await waitForText(roleCell("state"), `vacant for (?!${shown} s)\\d+ s`);
    expect(await shownFor()).toBeGreaterThan(shown);
    // In colour too: the vacant badge has a background of its own.
    const background = await page.evaluate((css) => {
      const { document, getComputedStyle } = globalThis as unknown as PageGlobals;
      return getComputedStyle(document.querySelector(css)).backgroundColor;
    }, `${roleCell("state")} .badge`);
    expect(background).toBe("rgb(255, 224, 199)"); // --vacant-bg

    // A page opened now lists it too: the service lists vacant roles.
    const fresh = await browser.context.newPage();
    try {
      await fresh.goto(page.url());
      await fresh.waitForFunction(
        (css) => /vacant for \d+ s/.test((globalThis as unknown as PageGlobals).document.querySelector(css)?.textContent ?? ""),
        roleCell("state"),
        { timeout: SHOWN_WITHIN_MS, polling: 50 },
      );
    } finally {
      await fresh.close();
    }
  });

  it("never steps a vacancy's duration back, though each read's estimate of the service's clock differs", async () => {
    // Every read shows only the vacant roles, and every other one a Date header 2 s behind:
    // with no held role, the page estimates the service's clock from that header.
    let reads = 0;
    const other = await browser.context.newPage();
    await other.route((url) => url.pathname.endsWith("/api/primary") && url.searchParams.get("vacant") === "true", async (route) => {
      const response = await route.fetch();
      const body = (await response.json()) as { primaries: { primary: unknown }[] };
      reads += 1;
      const date = Date.parse(response.headers()["date"]!) - (reads % 2 === 0 ? 2000 : 0);
      await route.fulfill({ response, headers: { ...response.headers(), date: new Date(date).toUTCString() }, json: { ...body, primaries: body.primaries.filter((view) => view.primary === null) } });
    });
    try {
      await other.goto(page.url());
      const cell = roleCell("state");
      const seen: number[] = [];
      while (reads < 8) {
        const shown = /vacant for (\d+) s/.exec((await other.locator(cell).first().textContent()) ?? "");
        if (shown !== null) seen.push(Number(shown[1]));
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(seen.length).toBeGreaterThan(10);
      expect(seen.slice(1).filter((value, index) => value < seen[index]!)).toEqual([]);
    } finally {
      await other.close();
    }
  });

  it("shows priorities and a standby that will take the role over by preemption (docs/protocol.md#priorities-and-preemption)", async () => {
    // Every read of the roles gets one more: a holder of priority 1, a standby of priority 2
    // named by a pending preemption, one of priority 0, and one of priority 3 that has not
    // asked yet, in the service's own answer shape.
    const other = await browser.context.newPage();
    await other.route((url) => url.pathname.endsWith("/api/primary") && url.searchParams.get("vacant") === "true", async (route) => {
      const response = await route.fetch();
      const body = (await response.json()) as { primaries: unknown[] };
      const now = Date.parse(response.headers()["date"]!);
      const iso = (ms: number): string => new Date(ms).toISOString();
      const ranked = {
        utype: "ranked",
        primary: { uuid: "bbbbbbbb-holder", address: "head-2.internal:5800", epoch: 4, renewedAt: iso(now - 100), expiresInMs: T - 100, revoked: false, priority: 1 },
        epoch: 4,
        intervalMs: I,
        timeoutMs: T,
        handover: { to: "aaaaaaaa-preferred", requestedAt: iso(now - 50), phase: "pending", until: iso(now - 50 + T), reason: "preempt" },
        standbys: [
          { uuid: "aaaaaaaa-preferred", address: "head-1.internal:5800", seenAt: iso(now - 200), priority: 2 },
          { uuid: "cccccccc-plain", address: "head-3.internal:5800", seenAt: iso(now - 300) },
          { uuid: "dddddddd-higher", address: "head-4.internal:5800", seenAt: iso(now - 400), priority: 3 },
        ],
      };
      await route.fulfill({ response, json: { ...body, primaries: [...body.primaries, ranked] } });
    });
    try {
      await other.goto(page.url());
      const row = '#roles tr[data-utype="ranked"]';
      await other.waitForSelector(`${row} .standbys li`, { timeout: SHOWN_WITHIN_MS });
      expect(await other.locator(`${row} .primary`).first().innerText()).toMatch(/head-2\.internal:5800 bbbbbbbb… priority 1/);
      const standbys = await other.locator(`${row} .standbys li`).allInnerTexts();
      expect(standbys[0]).toMatch(/^head-1\.internal:5800 aaaaaaaa… priority 2 seen \d+\.\d s ago · takes over at the primary's next renewal$/);
      expect(standbys[1]).toMatch(/^head-3\.internal:5800 cccccccc… seen \d+\.\d s ago$/);
      expect(standbys[2]).toMatch(/^head-4\.internal:5800 dddddddd… priority 3 seen \d+\.\d s ago · outranks the primary: takes over after its hold-down$/);
      expect(await other.locator(`${row} .state`).first().innerText()).toContain("handing over to head-1.internal:5800 (preempted by priority)");
    } finally {
      await other.close();
    }
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
    // The 409 is the handover refused on purpose above.
    expect(pageErrors.filter((line) => !/^503 \/api\/|^404 \/api\/primary\/[^/]+\/history$|^409 \/api\/primary\/[^/]+\/handover$/.test(line))).toEqual([]);
  });
});
