import type { FuzzCase } from "./http-fuzz-cases.js";
import type { RawExchange, RawResponse } from "./raw-http.js";

/**
 * The fuzz run's invariants on each exchange, checked from outside the host: it answered
 * in time, never with a 5xx, and every body is the contract's JSON (docs/api.md): an error
 * `{"error": {"code", "message"}}` (a 409 also carries the LeaseView), a LeaseView, the
 * list of primaries, the health report, or a role's term history. Returns what is wrong, or nothing.
 */
export function answerProblems(fuzzCase: FuzzCase, exchange: RawExchange): string[] {
  const problems: string[] = [];
  if (exchange.timedOut) problems.push(`hang: no answer and no close within ${fuzzCase.timeoutMs} ms`);
  if (!fuzzCase.abandons && exchange.responses.length < fuzzCase.responses) {
    problems.push(
      `unanswered: ${exchange.responses.length} of ${fuzzCase.responses} answers (closed: ${exchange.closed}, error: ${exchange.error ?? "none"})`,
    );
  }
  for (const response of exchange.responses) {
    const problem = responseProblem(response, fuzzCase.head);
    if (problem !== undefined) problems.push(`${response.status}: ${problem}; body ${JSON.stringify(response.body.slice(0, 200))}`);
  }
  return problems;
}

function responseProblem(response: RawResponse, head: boolean): string | undefined {
  if (response.status >= 500) return "a server error";
  if (head) return undefined;
  if (response.body === "") return "no body";
  if (!/^application\/json/.test(response.headers["content-type"] ?? "")) return `content-type ${response.headers["content-type"] ?? "missing"}`;
  if (/\bat .*\.[cm]?[jt]s:\d+/.test(response.body)) return "a stack trace in the body";
  let body: unknown;
  try {
    body = JSON.parse(response.body);
  } catch {
    return "a body that is not JSON";
  }
  return shapeProblem(response.status, body);
}

function shapeProblem(status: number, body: unknown): string | undefined {
  if (!isRecord(body)) return "not a JSON object";
  if ("error" in body) {
    if (status < 400) return "an error body on a success";
    const { error, ...rest } = body;
    if (!isRecord(error) || typeof error["code"] !== "string" || !/^[A-Z][A-Za-z]+$/.test(error["code"])) return "an error without a PascalCase code";
    if (typeof error["message"] !== "string" || error["message"] === "") return "an error without a message";
    if (Object.keys(rest).length > 0) return leaseViewProblem(rest);
    return undefined;
  }
  if (status >= 400) return "a failure without an error body";
  if (["roles", "reads", "members", "groups"].some((list) => list in body)) return participantProblem(body);
  if ("primaries" in body) {
    if (!Array.isArray(body["primaries"])) return "primaries is not an array";
    return body["primaries"].map(leaseViewProblem).find((problem) => problem !== undefined);
  }
  if ("status" in body) return body["status"] === "ok" && typeof body["store"] === "string" ? undefined : "a malformed health report";
  if ("terms" in body) return termHistoryProblem(body);
  return leaseViewProblem(body);
}

/**
 * POST /api/heartbeat: its four lists, each entry a part's status and its route's body; a
 * part is held to what its route is held to (never a 5xx; the role and read bodies a
 * LeaseView, an error with one, or an error alone).
 */
function participantProblem(answer: Record<string, unknown>): string | undefined {
  const lists = ["roles", "reads", "members", "groups"];
  const unknown = Object.keys(answer).filter((key) => !lists.includes(key));
  if (unknown.length > 0) return `a participant answer with unknown fields ${unknown.join(", ")}`;
  for (const list of lists) {
    const parts = answer[list];
    if (!Array.isArray(parts)) return `${list} is not an array`;
    for (const part of parts) {
      if (!isRecord(part) || !Number.isInteger(part["status"]) || !isRecord(part["body"])) return `a part of ${list} without a status and a body`;
      const status = part["status"] as number;
      const body = part["body"];
      if (status >= 500) return `a part of ${list} answered ${status}`;
      const problem = list === "roles" || list === "reads" ? shapeProblem(status, body) : status >= 400 ? shapeProblem(status, { error: body["error"] }) : typeof body["group"] === "string" ? undefined : "a member or group answer without its group";
      if (problem !== undefined) return `${list}: ${problem}`;
    }
  }
  return undefined;
}

const TERM_FIELDS = new Set(["epoch", "uuid", "address", "startedAt", "endedAt", "endedBy"]);
const ENDED_BY = new Set(["released", "revoked", "expired", "taken-over", null]);

/** GET /api/primary/{utype}/history: the role's last terms, newest first (docs/protocol.md). */
function termHistoryProblem(history: Record<string, unknown>): string | undefined {
  const unknown = Object.keys(history).filter((key) => !["utype", "epoch", "terms"].includes(key));
  if (unknown.length > 0) return `a term history with unknown fields ${unknown.join(", ")}`;
  if (typeof history["utype"] !== "string" || !/^[A-Za-z0-9._:-]{1,128}$/.test(history["utype"])) return "a term history without a valid utype";
  if (!Number.isInteger(history["epoch"]) || (history["epoch"] as number) < 0) return "a term history without a non-negative integer epoch";
  const terms = history["terms"];
  if (!Array.isArray(terms)) return "terms is not an array";
  for (const term of terms) {
    if (!isRecord(term) || Object.keys(term).some((key) => !TERM_FIELDS.has(key))) return "a term with unknown fields";
    if (!Number.isInteger(term["epoch"]) || (term["epoch"] as number) < 1 || (term["epoch"] as number) > (history["epoch"] as number)) return "a term epoch outside 1..epoch";
    if (typeof term["startedAt"] !== "string" || Number.isNaN(Date.parse(term["startedAt"]))) return "a term startedAt that is not a time";
    if (!ENDED_BY.has(term["endedBy"] as string | null)) return "a term endedBy outside the contract";
  }
  return undefined;
}

/** `revoked` is tolerated: docs/protocol.md#release-and-revoke's revoke shows the holder with `revoked: true`. */
const VIEW_FIELDS = new Set(["utype", "primary", "epoch", "intervalMs", "timeoutMs", "lease", "revoked", "handover", "standbys", "vacantSince"]);
const HANDOVER_FIELDS = new Set(["to", "requestedAt", "phase", "until"]);
const PRIMARY_FIELDS = new Set(["uuid", "address", "epoch", "renewedAt", "expiresInMs", "revoked"]);

function leaseViewProblem(view: unknown): string | undefined {
  if (!isRecord(view)) return "a LeaseView that is not an object";
  const unknown = Object.keys(view).filter((key) => !VIEW_FIELDS.has(key));
  if (unknown.length > 0) return `a LeaseView with unknown fields ${unknown.join(", ")}`;
  if (typeof view["utype"] !== "string" || !/^[A-Za-z0-9._:-]{1,128}$/.test(view["utype"])) return "a LeaseView without a valid utype";
  if (!Number.isInteger(view["intervalMs"]) || !Number.isInteger(view["timeoutMs"])) return "a LeaseView without integer timing";
  if (view["lease"] !== undefined && typeof view["lease"] !== "string") return "a lease that is not a string";
  if (!Number.isInteger(view["epoch"]) || (view["epoch"] as number) < 0) return "a LeaseView without a non-negative integer epoch";
  const handover = view["handover"];
  if (handover !== null && !(isRecord(handover) && Object.keys(handover).every((key) => HANDOVER_FIELDS.has(key)))) return "a handover that is neither null nor one of the contract";
  if (view["standbys"] !== undefined && !Array.isArray(view["standbys"])) return "standbys that are not a list";
  const primary = view["primary"];
  if (primary === null) return undefined;
  if (isRecord(primary) && primary["epoch"] !== view["epoch"]) return "a role epoch that is not its primary's";
  if (!isRecord(primary)) return "a primary that is neither null nor an object";
  const unknownPrimary = Object.keys(primary).filter((key) => !PRIMARY_FIELDS.has(key));
  if (unknownPrimary.length > 0) return `a primary with unknown fields ${unknownPrimary.join(", ")}`;
  if (typeof primary["uuid"] !== "string" || primary["uuid"] === "") return "a primary without a uuid";
  if (primary["address"] !== null && typeof primary["address"] !== "string") return "an address that is neither null nor a string";
  if (!Number.isInteger(primary["epoch"]) || (primary["epoch"] as number) < 1) return "an epoch that is not a positive integer";
  if (typeof primary["renewedAt"] !== "string" || Number.isNaN(Date.parse(primary["renewedAt"]))) return "a renewedAt that is not a time";
  if (typeof primary["expiresInMs"] !== "number") return "an expiresInMs that is not a number";
  return undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
