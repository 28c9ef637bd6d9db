import type { OperationDoc } from "../shared/contract/operation-doc.js";
import { errorResponse } from "../shared/http/answers.js";
import type { HttpResponseInit } from "../shared/http/azure-functions.js";
import type { HandlerRequest } from "../shared/http/handler-request.js";
import { rejectUnknownQuery } from "../shared/http/request-parts.js";
import type { Runtime } from "../shared/http/runtime.js";

/** The Prometheus text exposition format, version 0.0.4: what every Prometheus scraper reads. */
export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/**
 * GET /api/metrics — this process's metrics as Prometheus text (docs/operations.md). Only
 * the local host serves them: each process counts its own requests, so scrape every
 * process. In Azure a scaled-out app has no single process to scrape; its metrics go to
 * Application Insights, and this answers 404 saying so. Makes no store call.
 */
export async function metrics(request: HandlerRequest, runtime: Runtime): Promise<HttpResponseInit> {
  rejectUnknownQuery(request, []);
  if (runtime.metricsText === undefined) {
    return errorResponse(
      "NotFound",
      "This host does not serve metrics: in Azure they go to Application Insights (set APPLICATIONINSIGHTS_CONNECTION_STRING); see docs/operations.md.",
    );
  }
  return { status: 200, body: await runtime.metricsText(), headers: { "content-type": PROMETHEUS_CONTENT_TYPE, "cache-control": "no-store" } };
}

export const metricsDoc: OperationDoc = {
  tag: "operations",
  summary: "This process's metrics as Prometheus text (the local host; in Azure they go to Application Insights)",
  ok: { description: "The Prometheus text exposition format, version 0.0.4.", contentType: "text/plain", schema: { type: "string" } },
  errors: [{ code: "NotFound" }],
};
