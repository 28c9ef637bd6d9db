import { describe, expect, it } from "vitest";
import { parseRequestTarget } from "../../shared/host/request-target.js";

describe("parseRequestTarget", () => {
  it.each([
    ["/api/primary/x", "/api/primary/x", ""],
    ["/api/primary/x?uuid=a&code=k", "/api/primary/x", "?uuid=a&code=k"],
    // A path, never an authority: "//x" resolved against a base would make x the host.
    ["//[", "//[", ""],
    ["//evil.example/api/health", "//evil.example/api/health", ""],
    ["/api/primary/%2E%2E", "/api/", ""],
    ["/api/primary/%ZZ", "/api/primary/%ZZ", ""],
    ["http://elsewhere.example/api/primary/x?uuid=a", "/api/primary/x", "?uuid=a"],
    ["https://elsewhere.example:8443//api/health", "//api/health", ""],
  ])("routes %s by the path %s on the host's own origin", (target, pathname, search) => {
    const parsed = parseRequestTarget(target);
    expect(parsed).toMatchObject({ ok: true });
    if (!parsed.ok) return;
    expect(parsed.url.origin).toBe("http://127.0.0.1");
    expect(parsed.url.pathname).toBe(pathname);
    expect(parsed.url.search).toBe(search);
  });

  it.each([
    ["http://user:pw@host/api/primary/x", /credentials/],
    ["http://user@host/api/primary/x", /credentials/],
    ["http://[/api", /valid http or https URL/],
    ["ftp://host/api/health", /valid http or https URL/],
    ["*", /path under \/api/],
    ["example.com:443", /path under \/api/],
    ["", /path under \/api/],
  ])("refuses %s, saying why", (target, why) => {
    const parsed = parseRequestTarget(target);
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.message).toMatch(/^The request target .* is not valid: /);
    expect(parsed.message).toMatch(why);
  });

  it("shortens an overlong target in its message", () => {
    const parsed = parseRequestTarget(`x${"y".repeat(10_000)}`);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.message.length).toBeLessThan(200);
  });
});
