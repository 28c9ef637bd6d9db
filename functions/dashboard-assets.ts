import { readFile } from "node:fs/promises";

/**
 * The dashboard's files (functions/dashboard/), plain HTML, CSS and browser JavaScript with
 * no build step. `npm run build` and `npm run package` copy them beside the compiled
 * handlers (scripts/dashboard-assets.mjs), so this module finds them next to itself both
 * from the sources (vitest) and from dist/ (the local host, the deploy zip).
 */
const ASSET_DIR = new URL("./dashboard/", import.meta.url);

/** What may be asked for, by name: a closed list, so no request ever names a path on disk. */
export const DASHBOARD_ASSETS = {
  "app.js": "text/javascript; charset=utf-8",
  "app.css": "text/css; charset=utf-8",
  // Its own icon, or the browser asks for /favicon.ico without the key and logs a 401.
  "favicon.svg": "image/svg+xml",
} as const;

export type DashboardAssetName = keyof typeof DASHBOARD_ASSETS;

export function isDashboardAsset(name: string): name is DashboardAssetName {
  return Object.hasOwn(DASHBOARD_ASSETS, name);
}

const cache = new Map<string, Promise<string>>();

/** The file's text, read once per process (the files change only with a deployment). */
export function readDashboardFile(name: DashboardAssetName | "index.html"): Promise<string> {
  let text = cache.get(name);
  if (text === undefined) {
    text = readFile(new URL(name, ASSET_DIR), "utf8");
    // A failed read (a package without the files) is tried again next time, not cached.
    text.catch(() => cache.delete(name));
    cache.set(name, text);
  }
  return text;
}

/**
 * The page's policy: only its own origin's script, style and fetches; no inline code, no
 * frames, no forms, no plugins; and DOM sinks that would parse HTML from a string refused
 * (Trusted Types), since every value shown (addresses are free text) is a caller's input.
 */
export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "require-trusted-types-for 'script'",
  "trusted-types 'none'",
].join("; ");

/**
 * Headers of every dashboard answer. no-store and no-referrer because the page's address
 * (and so its asset addresses) carries the function key as `?code=`.
 */
export function dashboardHeaders(contentType: string): Record<string, string> {
  return {
    "content-type": contentType,
    "content-security-policy": DASHBOARD_CSP,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
    "cross-origin-opener-policy": "same-origin",
    "cross-origin-resource-policy": "same-origin",
  };
}
