import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page, Response } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServe, type ServeProcess } from "../chaos/service-processes.js";
import { launchChromium, type Browser } from "../helpers/chromium.js";
import { CliProcess, type CliEvent } from "../helpers/sdk-cli-process.js";

/**
 * Another page in the operator's browser against `ha-module serve` run without a key (so it
 * checks nobody), in a real Chromium: a page served from another port of 127.0.0.1 posts a
 * form to the handover route, and fetch()es a handover, a PUT and a DELETE to the service. Every
 * one is refused (403 CrossOrigin, or the browser's own CORS for those it must ask about
 * first), and the role's holder, epoch and handover stay as they were; then the dashboard's
 * own Hand over button, on the service's origin, still hands the role over
 * (docs/api.md#writes-from-another-origin, docs/dashboard.md).
 */
const I = 400;
const T = 2500;
const ROLE = "scheduler";
/** How long the page may take to show a change: a few refreshes on a loaded machine. */
const SHOWN_WITHIN_MS = 15_000;

interface LeaseView {
  primary: { uuid: string; address: string | null } | null;
  epoch: number;
  handover: unknown;
}

/** The little of the DOM the functions run in the page use (the tests compile without lib "dom"). */
interface PageGlobals {
  readonly document: {
    querySelector(css: string): { readonly textContent: string | null; submit(): void } | null;
  };
}

describe("a page of another origin in the operator's browser, against a service without a key", () => {
  let dir: string;
  let serve: ServeProcess;
  let browser: Browser;
  let elsewhere: Server;
  let elsewhereUrl: string;
  const electors: CliProcess[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "ha-cross-origin-"));
    const launching = launchChromium();
    launching.catch(() => undefined);
    serve = await startServe({ port: 0, dataDir: join(dir, "serve"), intervalMs: I, timeoutMs: T, outFile: join(dir, "serve.out"), env: { HA_IN_MEMORY: "true" } });
    for (const name of ["p1", "p2"]) electors.push(new CliProcess(name, ["elect", ROLE, "--address", `${name}.internal:5800`, "--endpoint", serve.url]));
    // The other page: any site, here a server on another port of the same 127.0.0.1. Its form
    // posts the handover with an empty body (`{}`: to any standby), as a plain HTML form can.
    elsewhere = createServer((_request, response) => {
      response.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      response.end(`<!doctype html><title>elsewhere</title><form id="handover" method="POST" action="${serve.url}/primary/${ROLE}/handover"></form>`);
    });
    await new Promise<void>((resolve) => elsewhere.listen(0, "127.0.0.1", resolve));
    elsewhereUrl = `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}/`;
    browser = await launching;
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => elsewhere?.close(resolve));
    await Promise.all(electors.map((child) => child.kill()));
    serve?.process.expectExit();
    serve?.process.signal("SIGTERM");
    await serve?.process.exited;
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  async function role(): Promise<LeaseView> {
    const answer = await fetch(`${serve.url}/primary/${ROLE}?standbys=true`);
    expect(answer.status).toBe(200);
    return (await answer.json()) as LeaseView;
  }

  async function elected(from: Map<CliProcess, number> = new Map()): Promise<{ who: CliProcess; event: CliEvent }> {
    return Promise.any(electors.map(async (who) => ({ who, event: await who.waitFor((e) => e.event === "elected", { from: from.get(who) ?? 0, timeoutMs: 20_000 }) })));
  }

  it("refuses the other page's form post and fetches: the role keeps its holder, its epoch and no handover", async () => {
    const { event } = await elected();
    const before = await role();
    expect(before.primary?.uuid).toBe(event["uuid"]);
    const page = await browser.context.newPage();
    // What the service answered each request of the other page, as the browser received it.
    const answered: string[] = [];
    const record = (response: Response): void => {
      if (response.url().startsWith(serve.url)) answered.push(`${response.request().method()} ${new URL(response.url()).pathname} ${response.status()}`);
    };
    page.on("response", record);
    try {
      await page.goto(elsewhereUrl);
      // A form post navigates to the service's answer: shown as the page's text.
      const navigated = page.waitForResponse((response) => response.request().method() === "POST" && response.url() === `${serve.url}/primary/${ROLE}/handover`);
      await page.evaluate(() => (globalThis as unknown as PageGlobals).document.querySelector("#handover")?.submit());
      const shown = await (await navigated).text();
      expect(JSON.parse(shown)).toMatchObject({ error: { code: "CrossOrigin", message: expect.stringMatching(/^POST from "http:\/\/127\.0\.0\.1:\d+" refused/) } });
      await page.goto(elsewhereUrl);

      const tried = await page.evaluate(
        async ({ base, utype, holder }) => {
          const outcome = async (request: Promise<{ type: string; status: number }>): Promise<string> =>
            request.then(
              (response) => `${response.type} ${response.status}`,
              (error: unknown) => `failed: ${String(error)}`,
            );
          return {
            // Simple requests, which a browser sends without asking first: the service must refuse them itself.
            noCorsHandover: await outcome(fetch(`${base}/primary/${utype}/handover`, { method: "POST", mode: "no-cors", headers: { "content-type": "text/plain" }, body: "{}" })),
            corsHandover: await outcome(fetch(`${base}/primary/${utype}/handover`, { method: "POST", headers: { "content-type": "text/plain" }, body: "{}" })),
            // A PUT or a DELETE from another origin is asked about first (a preflight OPTIONS), which neither host allows.
            put: await outcome(fetch(`${base}/primary/${utype}`, { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify({ uuid: "intruder" }) })),
            revoke: await outcome(fetch(`${base}/primary/${utype}?uuid=${holder}`, { method: "DELETE" })),
          };
        },
        { base: serve.url, utype: ROLE, holder: before.primary!.uuid },
      );
      // The no-cors answer is opaque to the page; the cors one, without CORS headers, is a network error to it.
      expect(tried.noCorsHandover).toBe("opaque 0");
      expect(tried.corsHandover).toMatch(/^failed: TypeError/);
      expect(tried.put).toMatch(/^failed: TypeError/);
      expect(tried.revoke).toMatch(/^failed: TypeError/);
      // What the service answered, as far as the browser lets it be seen: the form post and the
      // no-cors handover refused (the cors one's answer is withheld from the page, and from
      // Playwright, for want of CORS headers); the PUT and the DELETE never sent, their
      // preflights unanswered by any host. The role below shows that none of them was done.
      const path = `/api/primary/${ROLE}`;
      expect(answered).toEqual([`POST ${path}/handover 403`, `POST ${path}/handover 403`]);
    } finally {
      await page.close();
    }
    // The refused handovers stored nothing: a handover is on the entry as soon as it is accepted.
    const after = await role();
    expect(after.handover).toBeNull();
    expect(after.primary?.uuid).toBe(before.primary?.uuid);
    expect(after.epoch).toBe(before.epoch);
  });

  it("still hands over from the dashboard's own page: the standby chosen becomes primary at the next epoch", async () => {
    const page: Page = await browser.context.newPage();
    try {
      const before = await role();
      const holder = electors.find((elector) => elector.events.some((e) => e.event === "elected" && e["uuid"] === before.primary?.uuid))!;
      const standby = electors.find((elector) => elector !== holder)!;
      const address = `${standby.name}.internal:5800`;
      await page.goto(`${serve.url}/dashboard`);
      const select = page.locator(`#roles tr[data-utype="${ROLE}"] .handover-cell select`);
      await page.waitForFunction(
        // The row appears with the first refresh; its list, once the standby has announced itself.
        ([css, wanted]) => [...(((globalThis as unknown as PageGlobals).document.querySelector(css as string) as unknown as { options: { text: string }[] } | null)?.options ?? [])].some((option) => option.text.startsWith(wanted as string)),
        [`#roles tr[data-utype="${ROLE}"] .handover-cell select`, address],
        { timeout: SHOWN_WITHIN_MS, polling: 50 },
      );
      const marks = new Map(electors.map((elector) => [elector, elector.events.length]));
      await select.selectOption((await select.locator("option", { hasText: address }).last().getAttribute("value"))!);
      const answered = page.waitForResponse((response) => response.url().includes(`/primary/${ROLE}/handover`));
      await page.locator(`#roles tr[data-utype="${ROLE}"] button.handover`).click();
      expect((await answered).status()).toBe(202);
      const { who, event } = await elected(marks);
      expect(who).toBe(standby);
      expect(event["epoch"]).toBeGreaterThan(before.epoch);
    } finally {
      await page.close();
    }
  });
});
