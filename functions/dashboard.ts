import type { OperationDoc } from "../shared/contract/operation-doc.js";
import { errorResponse } from "../shared/http/answers.js";
import type { HttpResponseInit } from "../shared/http/azure-functions.js";
import type { HandlerRequest } from "../shared/http/handler-request.js";
import { rejectUnknownQuery } from "../shared/http/request-parts.js";
import type { Runtime } from "../shared/http/runtime.js";
import { DASHBOARD_ASSETS, dashboardHeaders, isDashboardAsset, readDashboardFile } from "./dashboard-assets.js";

/**
 * GET /api/dashboard — the operator's page (docs/dashboard.md). The HTML is the template
 * functions/dashboard/index.html with the places the page needs filled in: where the API
 * is (this request's own path, less "/dashboard"), the function key to pass on (a browser
 * navigation cannot send x-functions-key, so it came as `?code=` and goes on the same way
 * to the page's scripts and fetches) and the refresh interval I. Nothing else of the
 * request reaches the page.
 */
export async function dashboard(request: HandlerRequest, { membership }: Runtime): Promise<HttpResponseInit> {
  rejectUnknownQuery(request, []);
  const code = request.query.get("code");
  const apiBase = new URL(request.url).pathname.replace(/\/+$/, "").replace(/\/dashboard$/, "");
  const template = await readDashboardFile("index.html");
  const values: Record<string, string> = {
    apiBase,
    // encodeURIComponent leaves no quote, < or & in it, and the escaping below makes sure.
    keyQuery: code === null ? "" : `?code=${encodeURIComponent(code)}`,
    intervalMs: String(membership.intervalMs),
    timeoutMs: String(membership.timeoutMs),
  };
  const body = template.replace(/\{\{(\w+)\}\}/g, (_whole, name: string) => escapeAttribute(values[name] ?? ""));
  return { status: 200, body, headers: dashboardHeaders("text/html; charset=utf-8") };
}

/** GET /api/dashboard/{asset} — the page's script and style sheet, from a closed list. */
export async function dashboardAsset(request: HandlerRequest): Promise<HttpResponseInit> {
  rejectUnknownQuery(request, []);
  const name = request.params["asset"] ?? "";
  if (!isDashboardAsset(name)) {
    return errorResponse("NotFound", `No dashboard asset ${JSON.stringify(name.slice(0, 100))}; there are ${Object.keys(DASHBOARD_ASSETS).join(", ")}.`);
  }
  return { status: 200, body: await readDashboardFile(name), headers: dashboardHeaders(DASHBOARD_ASSETS[name]) };
}

function escapeAttribute(value: string): string {
  return value.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/'/g, "&#39;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

export const dashboardDoc: OperationDoc = {
  tag: "operations",
  summary: "The operator's dashboard: roles, members and term history, refreshed every I (key as ?code=)",
  ok: { description: "The page (HTML; its script and style sheet are dashboard assets).", contentType: "text/html" },
};

export const dashboardAssetDoc: OperationDoc = {
  tag: "operations",
  summary: "A file of the dashboard page, from a closed list",
  path: { asset: { description: "The asset's file name.", schema: { enum: Object.keys(DASHBOARD_ASSETS) } } },
  ok: { description: "The asset.", contentType: [...new Set(Object.values(DASHBOARD_ASSETS).map((type) => type.split(";")[0]!.trim()))] },
  errors: [{ code: "NotFound" }],
};
