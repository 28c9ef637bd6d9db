/**
 * The rule that refuses a write a browser sent from a page of another origin
 * (shared/http/cross-origin.ts, docs/api.md#writes-from-another-origin), case by case: what a
 * browser sends from the service's own page, from another port of 127.0.0.1, from another
 * site, behind Azure's front end and Front Door, and what programs send (nothing).
 */
import { describe, expect, it } from "vitest";
import { crossOriginRefusal } from "../../shared/http/cross-origin.js";

type Headers = Readonly<Record<string, string>>;

function verdict(method: string, headers: Headers): "allowed" | "refused" {
  const lower = new Map(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
  const answer = crossOriginRefusal(method, (name) => lower.get(name));
  if (answer === undefined) return "allowed";
  expect(answer.status).toBe(403);
  expect(answer.jsonBody).toMatchObject({ error: { code: "CrossOrigin", message: expect.stringMatching(/another origin than this service, so nothing was done/) } });
  return "refused";
}

const LOCAL = { Host: "127.0.0.1:7071" };

const CASES: ReadonlyArray<readonly [what: string, method: string, headers: Headers, expected: "allowed" | "refused"]> = [
  // Programs: the CLI, the SDK (Node's fetch sends Sec-Fetch-Mode but neither Origin nor Sec-Fetch-Site), curl.
  ["a PUT with no Origin (the SDK, curl)", "PUT", { ...LOCAL, "Sec-Fetch-Mode": "cors" }, "allowed"],
  ["a POST with no Origin", "POST", LOCAL, "allowed"],
  ["a DELETE with no Origin", "DELETE", LOCAL, "allowed"],
  // The service's own dashboard.
  ["the dashboard's handover (same-origin)", "POST", { ...LOCAL, Origin: "http://127.0.0.1:7071", "Sec-Fetch-Site": "same-origin" }, "allowed"],
  ["the dashboard's handover from a browser without Sec-Fetch-Site", "POST", { ...LOCAL, Origin: "http://127.0.0.1:7071" }, "allowed"],
  ["a page opened at localhost, Host localhost", "POST", { Host: "localhost:7071", Origin: "http://localhost:7071" }, "allowed"],
  ["an Origin in upper case", "POST", { Host: "app.example", Origin: "https://APP.example" }, "allowed"],
  ["IPv6 loopback", "POST", { Host: "[::1]:7071", Origin: "http://[::1]:7071" }, "allowed"],
  ["Sec-Fetch-Site none (typed by the user)", "POST", { ...LOCAL, "Sec-Fetch-Site": "none" }, "allowed"],
  // Other pages in the operator's browser.
  ["a form post from another port of 127.0.0.1 (same-site)", "POST", { ...LOCAL, Origin: "http://127.0.0.1:8080", "Sec-Fetch-Site": "same-site" }, "refused"],
  ["a fetch from another site", "POST", { ...LOCAL, Origin: "https://evil.example", "Sec-Fetch-Site": "cross-site" }, "refused"],
  ["a PUT from another site", "PUT", { ...LOCAL, Origin: "https://evil.example", "Sec-Fetch-Site": "cross-site" }, "refused"],
  ["a DELETE from another site", "DELETE", { ...LOCAL, Origin: "https://evil.example", "Sec-Fetch-Site": "cross-site" }, "refused"],
  ["cross-site without an Origin", "POST", { ...LOCAL, "Sec-Fetch-Site": "cross-site" }, "refused"],
  ["an unknown Sec-Fetch-Site", "POST", { ...LOCAL, Origin: "http://127.0.0.1:7071", "Sec-Fetch-Site": "elsewhere" }, "refused"],
  ["another port, from a browser without Sec-Fetch-Site", "POST", { ...LOCAL, Origin: "http://127.0.0.1:8080" }, "refused"],
  ["another site, from a browser without Sec-Fetch-Site", "PUT", { ...LOCAL, Origin: "https://evil.example" }, "refused"],
  ["Origin null (a sandboxed frame, a file: page)", "POST", { ...LOCAL, Origin: "null" }, "refused"],
  ["a file: Origin", "POST", { ...LOCAL, Origin: "file://" }, "refused"],
  ["an Origin that is no URL", "POST", { ...LOCAL, Origin: "127.0.0.1:7071" }, "refused"],
  ["an Origin with no Host to compare", "POST", { Origin: "http://127.0.0.1:7071" }, "refused"],
  ["a Host that smuggles a path", "POST", { Host: "evil.example/x", Origin: "http://evil.example" }, "refused"],
  ["a Host that smuggles userinfo", "POST", { Host: "127.0.0.1:7071@evil.example", Origin: "http://evil.example" }, "refused"],
  // Behind Azure's front end.
  ["App Service: Origin and Host the app's name", "POST", { Host: "app.azurewebsites.net", Origin: "https://app.azurewebsites.net" }, "allowed"],
  ["a Host with the default port written out", "POST", { Host: "app.azurewebsites.net:443", Origin: "https://app.azurewebsites.net" }, "allowed"],
  ["another port of the same host is another origin", "POST", { Host: "app.azurewebsites.net:8443", Origin: "https://app.azurewebsites.net" }, "refused"],
  ["the scheme the app is told is not compared (TLS ends in front)", "POST", { Host: "app.azurewebsites.net", Origin: "http://app.azurewebsites.net" }, "allowed"],
  ["Front Door: the browser's host in X-Forwarded-Host", "POST", { Host: "app.azurewebsites.net", "X-Forwarded-Host": "ha.example.com", Origin: "https://ha.example.com" }, "allowed"],
  ["X-Forwarded-Host with a list of proxies", "POST", { Host: "app.azurewebsites.net", "X-Forwarded-Host": "ha.example.com, edge.internal", Origin: "https://ha.example.com" }, "allowed"],
  ["X-Forwarded-Host that is not the Origin's", "POST", { Host: "app.azurewebsites.net", "X-Forwarded-Host": "ha.example.com", Origin: "https://evil.example" }, "refused"],
  ["a proxy that rewrote Host, seen by the browser as same-origin", "POST", { Host: "app.azurewebsites.net", Origin: "https://apim.example.com", "Sec-Fetch-Site": "same-origin" }, "allowed"],
  // Reads are never refused for where they come from.
  ["a GET from another site", "GET", { ...LOCAL, Origin: "https://evil.example", "Sec-Fetch-Site": "cross-site" }, "allowed"],
  ["a HEAD from another site", "HEAD", { ...LOCAL, Origin: "https://evil.example", "Sec-Fetch-Site": "cross-site" }, "allowed"],
  ["an OPTIONS from another site", "OPTIONS", { ...LOCAL, Origin: "https://evil.example", "Sec-Fetch-Site": "cross-site" }, "allowed"],
];

describe("a write from another origin", () => {
  it.each(CASES)("%s (%s): %o is %s", (_what, method, headers, expected) => {
    expect(verdict(method, headers)).toBe(expected);
  });

  it("names the method and the Origin, cut short, in its message", () => {
    const long = `https://${"a".repeat(300)}.example`;
    const answer = crossOriginRefusal("PUT", (name) => ({ host: "127.0.0.1:7071", origin: long, "sec-fetch-site": "cross-site" })[name]);
    const message = (answer?.jsonBody as { error: { message: string } }).error.message;
    expect(message).toMatch(/^PUT from "https:\/\/a+" refused \(Sec-Fetch-Site: cross-site\)/);
    expect(message.length).toBeLessThan(360);
  });
});
