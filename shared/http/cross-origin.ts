import { errorResponse } from "./answers.js";
import type { HttpResponseInit } from "./azure-functions.js";

/** Methods that change nothing: never refused for where they come from. */
const SAFE_METHODS: ReadonlySet<string> = new Set(["GET", "HEAD", "OPTIONS"]);

/** What a browser's Sec-Fetch-Site says of a request from the page's own origin ("none": the user typed or bookmarked it). */
const OWN_FETCH_SITES: ReadonlySet<string> = new Set(["same-origin", "none"]);

/**
 * The 403 CrossOrigin answer for a write (PUT, DELETE, POST) that a browser sent from a page
 * of another origin than this service's, or undefined when it may go ahead
 * (docs/api.md#writes-from-another-origin). A page the operator happens to have open (another
 * site, or another port of 127.0.0.1) can make the browser send a form POST or a no-cors
 * fetch to the local host, which with no key checks nobody: without this, that page could
 * hand a role over.
 *
 * In order:
 *  1. GET, HEAD and OPTIONS are never refused.
 *  2. `Sec-Fetch-Site`, which every current browser sends and no page can set, decides when
 *     present: `same-origin` (or `none`) goes ahead, anything else (`same-site`: another port
 *     of 127.0.0.1 is that; `cross-site`) is refused. The browser knows the origin the page
 *     was loaded from, however many proxies rewrote Host on the way, so this is the answer
 *     behind Azure's front end too.
 *  3. Without it, a request without `Origin` goes ahead: the CLI, the SDK and curl send none.
 *  4. An `Origin` goes ahead when its host and port are the request's `Host` or one of its
 *     `X-Forwarded-Host` (Azure Front Door sends the host the browser used there; App Service
 *     itself passes Host on unchanged); `null`, anything else, is refused. The scheme is not
 *     compared: TLS ends in front of the app, so the scheme the app is told is not the one
 *     the browser used. A page cannot send X-Forwarded-Host from another origin, since a
 *     header of its own makes the browser ask first (a preflight OPTIONS, which neither host
 *     allows unless CORS is configured on the app).
 */
export function crossOriginRefusal(method: string, header: (name: string) => string | undefined): HttpResponseInit | undefined {
  if (SAFE_METHODS.has(method)) return undefined;
  const site = header("sec-fetch-site")?.trim().toLowerCase();
  const origin = header("origin")?.trim();
  if (site !== undefined && site !== "") {
    return OWN_FETCH_SITES.has(site) ? undefined : refusal(method, origin, `Sec-Fetch-Site: ${site.slice(0, 20)}`);
  }
  if (origin === undefined) return undefined;
  const from = originOf(origin);
  if (from !== undefined) {
    const own = [header("host"), ...(header("x-forwarded-host")?.split(",") ?? [])];
    if (own.some((host) => host !== undefined && sameHost(from, host.trim()))) return undefined;
  }
  return refusal(method, origin, "Origin is not this service's");
}

function refusal(method: string, origin: string | undefined, why: string): HttpResponseInit {
  const shown = origin === undefined ? "" : ` from ${JSON.stringify(origin.slice(0, 100))}`;
  return errorResponse(
    "CrossOrigin",
    `${method}${shown} refused (${why}): a browser sent this write from a page of another origin than this service, so nothing was done. ` +
      "Write from the service's own dashboard, or from a program (the CLI, the SDK, curl), which sends no Origin.",
  );
}

/** The Origin header as a URL of an http(s) origin; undefined for "null" and anything else. */
function originOf(value: string): URL | undefined {
  try {
    const url = new URL(value);
    return url.protocol === "http:" || url.protocol === "https:" ? url : undefined;
  } catch {
    return undefined;
  }
}

/** Is `host` (a Host header's value) the origin's host and port? Read with the origin's scheme, so ":443" on https is no port at all. */
function sameHost(origin: URL, host: string): boolean {
  if (host === "" || /[/?#@\\]/.test(host)) return false;
  try {
    return new URL(`${origin.protocol}//${host}`).host === origin.host;
  } catch {
    return false;
  }
}
