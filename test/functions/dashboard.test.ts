import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { operations } from "../../functions/routes.js";
import { HttpRequest, InvocationContext, type HttpResponseInit } from "../../shared/http/azure-functions.js";
import { handleRoute } from "../../shared/http/dispatch.js";
import { routesOf } from "../../shared/http/route.js";
import { createRuntime } from "../../shared/http/runtime.js";
import { compileRoute, matchRoute } from "../../shared/host/route-table.js";
import { MemoryLeaseStore } from "../../shared/store/memory-store.js";
import { FakeClock } from "../helpers/fake-clock.js";
import { WALL_START } from "../helpers/route-requests.js";

/**
 * GET /api/dashboard and its assets through the route table and dispatcher both hosts use.
 * The page itself is exercised in a real Chromium (test/e2e/dashboard-browser.test.ts);
 * these pin what the server promises: content types, the policy, the key passed on and
 * never injected, and a closed list of assets.
 */
const runtime = createRuntime({ timing: { intervalMs: 250, timeoutMs: 1500 }, storeTimeoutMs: 2000, leaseSecret: "a-test-secret-that-is-long-enough-for-hmac" }, { leases: new MemoryLeaseStore(), clock: new FakeClock(WALL_START) });
const routes = routesOf(operations).map(compileRoute);
const source = (name: string): string => readFileSync(new URL(`../../functions/dashboard/${name}`, import.meta.url), "utf8");

async function get(path: string): Promise<{ status: number; headers: Record<string, string>; text: string; json: unknown }> {
  const url = new URL(`http://localhost${path}`);
  const match = matchRoute(routes, url.pathname);
  if (match === undefined) throw new Error(`no route for ${path}`);
  const request = new HttpRequest({ method: "GET", url: url.toString(), params: match.params, headers: {} });
  const response: HttpResponseInit = await handleRoute(match.route.route, request, new InvocationContext(), async () => runtime);
  return {
    status: response.status ?? 200,
    headers: (response.headers ?? {}) as Record<string, string>,
    text: typeof response.body === "string" ? response.body : "",
    json: response.jsonBody,
  };
}

describe("GET /api/dashboard", () => {
  it("answers the page as HTML with a strict Content-Security-Policy: own-origin script, style and fetches only, no inline code", async () => {
    const page = await get("/api/dashboard");
    expect(page.status).toBe(200);
    expect(page.headers["content-type"]).toBe("text/html; charset=utf-8");
    const csp = page.headers["content-security-policy"] ?? "";
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:|\*/);
    expect(page.headers["x-content-type-options"]).toBe("nosniff");
    expect(page.headers["referrer-policy"]).toBe("no-referrer");
    expect(page.headers["cache-control"]).toBe("no-store");
    // No inline script or style, which the policy would refuse anyway.
    expect(page.text).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>|<style|\sstyle=|\son[a-z]+=/i);
  });

  it("fills in the API base, the refresh interval I and T from the configuration, and no placeholder is left", async () => {
    const page = await get("/api/dashboard");
    expect(page.text).toContain('data-api-base="/api"');
    expect(page.text).toContain('data-interval-ms="250"');
    expect(page.text).toContain('data-timeout-ms="1500"');
    expect(page.text).toContain('src="/api/dashboard/app.js"');
    expect(page.text).not.toMatch(/\{\{|\}\}/);
  });

  it("passes the function key given as ?code= on to the page's script and style sheet, URL-encoded", async () => {
    const page = await get("/api/dashboard?code=k%2By%2F%3D");
    expect(page.text).toContain('src="/api/dashboard/app.js?code=k%2By%2F%3D"');
    expect(page.text).toContain('href="/api/dashboard/app.css?code=k%2By%2F%3D"');
  });

  it("never lets the key break out of its attribute: a key with quotes and markup stays encoded text", async () => {
    const page = await get(`/api/dashboard?code=${encodeURIComponent(`"><script>alert(1)</script>'`)}`);
    expect(page.status).toBe(200);
    expect(page.text).not.toContain("<script>alert");
    expect(page.text).toContain(`src="/api/dashboard/app.js?code=%22%3E%3Cscript%3Ealert(1)%3C%2Fscript%3E&#39;"`);
    expect(page.text.match(/<script/g)).toHaveLength(1);
  });

  it("refuses an unknown query parameter with a JSON error naming it", async () => {
    const page = await get("/api/dashboard?refresh=1");
    expect(page.status).toBe(400);
    expect(page.json).toMatchObject({ error: { code: "InvalidRequest", message: expect.stringContaining('"refresh"') } });
  });
});

describe("what the page's script asks of the service", () => {
  it("sends only queries the service accepts: the roles with their standbys and the vacant ones", async () => {
    // The list routes refuse an unknown query parameter (400): a flag renamed on one side
    // would leave the page without roles.
    const queries = [...source("app.js").matchAll(/"(\/[a-z/]+\?[^"]+)"/g)].map((match) => match[1]!);
    expect(queries).toEqual(["/primary?standbys=true&vacant=true"]);
    for (const query of queries) {
      const answer = await get(`/api${query}`);
      expect(answer.status, JSON.stringify(answer.json)).toBe(200);
      expect(answer.json).toEqual({ primaries: [] });
    }
  });
});

describe("GET /api/dashboard/{asset}", () => {
  it.each([
    ["app.js", "text/javascript; charset=utf-8"],
    ["app.css", "text/css; charset=utf-8"],
    ["favicon.svg", "image/svg+xml"],
  ])("serves %s with its content type and the same policy, byte for byte from functions/dashboard/", async (name, type) => {
    const asset = await get(`/api/dashboard/${name}?code=anything`);
    expect(asset.status).toBe(200);
    expect(asset.headers["content-type"]).toBe(type);
    expect(asset.headers["content-security-policy"]).toContain("default-src 'none'");
    expect(asset.headers["x-content-type-options"]).toBe("nosniff");
    expect(asset.text).toBe(source(name));
  });

  it.each(["index.html", "..%2Fdashboard.ts", "..%2F..%2Fpackage.json", "APP.JS", "constructor"])(
    "answers 404 NotFound with the list of assets for %s: only the listed files are ever read",
    async (name) => {
      const asset = await get(`/api/dashboard/${name}`);
      expect(asset.status).toBe(404);
      expect(asset.json).toMatchObject({ error: { code: "NotFound", message: expect.stringContaining("app.js, app.css, favicon.svg") } });
    },
  );
});
