import type { OperationDoc } from "../shared/contract/operation-doc.js";
import { json } from "../shared/http/answers.js";
import type { HttpResponseInit } from "../shared/http/azure-functions.js";
import type { HandlerRequest } from "../shared/http/handler-request.js";
import { buildOpenApi } from "../shared/http/openapi.js";
import { rejectUnknownQuery } from "../shared/http/request-parts.js";
import { packageVersion } from "../shared/config/package-version.js";
import type { Operation } from "../shared/http/route.js";

/**
 * GET /api/openapi.json — the OpenAPI 3.1 description of every route, built once per
 * process from the route table itself (functions/routes.ts, which hands its rows in here, so
 * that this file need not import the table it is a row of) and the contract's schemas.
 * No store call: it answers even while the store is down.
 */
export function openApiOf(operations: () => readonly Operation[]): (request: HandlerRequest) => Promise<HttpResponseInit> {
  let document: unknown;
  return async (request) => {
    rejectUnknownQuery(request, []);
    document ??= buildOpenApi(operations(), packageVersion());
    return json(200, document);
  };
}

export const openApiDoc: OperationDoc = {
  tag: "operations",
  summary: "This document: the OpenAPI 3.1 description of every route",
  ok: { description: "The OpenAPI document.", contentType: "application/json", schema: { type: "object", required: ["openapi", "paths"] } },
};
