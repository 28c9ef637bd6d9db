import { json } from "../shared/http/answers.js";
import type { HttpResponseInit } from "../shared/http/azure-functions.js";
import type { HandlerRequest } from "../shared/http/handler-request.js";
import { rejectUnknownQuery } from "../shared/http/request-parts.js";
import type { Runtime } from "../shared/http/runtime.js";
import { parseHistoryLimit, parseId } from "../shared/http/validation.js";
import type { RequestArrival } from "../shared/service/request-budget.js";
import type { OperationDoc } from "../shared/contract/operation-doc.js";
import { TERM_HISTORY_SLOTS } from "../shared/contract/term-history.js";

/** GET /api/primary/{utype}/history[?limit=N] — the role's last terms, newest first: two reads, no write. */
export async function getPrimaryHistory(request: HandlerRequest, { service }: Runtime, arrival: RequestArrival): Promise<HttpResponseInit> {
  rejectUnknownQuery(request, Object.keys(getPrimaryHistoryDoc.query ?? {}));
  const utype = parseId("utype", request.params["utype"]);
  const limit = parseHistoryLimit(request.query.get("limit") ?? undefined);
  return json(200, await service.history(utype, limit, arrival));
}

export const getPrimaryHistoryDoc: OperationDoc = {
  tag: "leases",
  summary: "The role's last terms, newest first",
  description: "Who held the role, from when to when, and how each term ended (docs/protocol.md, \"Term history\"). The live term has `endedAt` and `endedBy` null.",
  query: {
    limit: { description: `How many terms, 1 to ${TERM_HISTORY_SLOTS} (the default).`, schema: { type: "integer", minimum: 1, maximum: TERM_HISTORY_SLOTS } },
  },
  ok: { description: "The role's history; `terms: []` and epoch 0 for a role never held.", json: "TermHistory" },
};
