import { CorruptedMessageError } from "./corrupted-message-error.js";
import type { HandoverView, HealthView, LeaseView, PrimaryView, StandbyView } from "../../contract/lease-view.js";
import { isPriority, PRIORITY_RULE } from "../../contract/input-rules.js";

/**
 * Validation of what the service answers (docs/api.md). A body is trusted only when every
 * field the contract promises is present with the right type and the utype is the one
 * asked for; anything else is a CorruptedMessageError, never a half-read value.
 */

type Json = Record<string, unknown>;

export function parseJsonBody(text: string, status: number, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new CorruptedMessageError(`${what}: the ${status} response body is not JSON.`, status);
  }
}

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isNonNegativeInteger(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}

function corrupted(what: string, status: number, problem: string): CorruptedMessageError {
  return new CorruptedMessageError(`${what}: corrupted message (${problem}).`, status);
}

/** A LeaseView for `utype`; `expectedUtype` undefined accepts any utype (name resolving). */
export function parseLeaseView(body: unknown, expectedUtype: string | undefined, status: number, what: string): LeaseView {
  if (!isObject(body)) throw corrupted(what, status, "the body is not a JSON object");
  const { utype, primary, epoch, intervalMs, timeoutMs, handover, standbys, vacantSince } = body;
  if (typeof utype !== "string") throw corrupted(what, status, "utype is missing");
  if (expectedUtype !== undefined && utype !== expectedUtype) {
    throw corrupted(what, status, `asked for utype ${JSON.stringify(expectedUtype)}, the answer is about ${JSON.stringify(utype)}`);
  }
  if (!isNonNegativeInteger(intervalMs) || intervalMs === 0 || !isNonNegativeInteger(timeoutMs) || timeoutMs <= 2 * intervalMs) {
    throw corrupted(what, status, "intervalMs and timeoutMs must be positive integers with timeoutMs > 2 × intervalMs");
  }
  const holder = parsePrimary(primary, what, status);
  if (!isNonNegativeInteger(epoch)) throw corrupted(what, status, "epoch must be a non-negative integer");
  if (holder !== null && holder.epoch !== epoch) {
    throw corrupted(what, status, `the role's epoch ${epoch} is not its primary's epoch ${holder.epoch}`);
  }
  const view: LeaseView = { utype, primary: holder, epoch, intervalMs, timeoutMs, handover: parseHandover(handover, what, status) };
  const withStandbys = standbys === undefined ? view : { ...view, standbys: parseStandbys(standbys, what, status) };
  if (vacantSince === undefined) return withStandbys;
  if (!isIsoTime(vacantSince)) throw corrupted(what, status, "vacantSince must be an ISO-8601 time");
  return { ...withStandbys, vacantSince };
}

function isIsoTime(value: unknown): value is string {
  return typeof value === "string" && !Number.isNaN(Date.parse(value));
}

/** A service from before planned handover omits it: none. */
function parseHandover(value: unknown, what: string, status: number): HandoverView | null {
  if (value === undefined || value === null) return null;
  if (!isObject(value)) throw corrupted(what, status, "handover must be an object or null");
  const { to, requestedAt, phase, until, reason } = value;
  if (to !== null && (typeof to !== "string" || to === "")) throw corrupted(what, status, "handover.to must be a uuid or null");
  if (phase !== "pending" && phase !== "reserved") throw corrupted(what, status, 'handover.phase must be "pending" or "reserved"');
  if (!isIsoTime(requestedAt) || !isIsoTime(until)) throw corrupted(what, status, "handover.requestedAt and handover.until must be ISO-8601 times");
  // Absent: an operator's handover (and every handover of a service from before priorities).
  if (reason !== undefined && reason !== "preempt") throw corrupted(what, status, 'handover.reason must be "preempt" or absent');
  return reason === "preempt" ? { to, requestedAt, phase, until, reason } : { to, requestedAt, phase, until };
}

function parseStandbys(value: unknown, what: string, status: number): StandbyView[] {
  if (!Array.isArray(value)) throw corrupted(what, status, "standbys must be an array");
  return value.map((standby: unknown) => parseStandby(standby, what, status));
}

/** One standby row as the service shows it: `{uuid, address, seenAt}`. */
export function parseStandby(standby: unknown, what: string, status: number): StandbyView {
  if (!isObject(standby)) throw corrupted(what, status, "a standby must be an object");
  const { uuid, address, seenAt, priority } = standby;
  if (typeof uuid !== "string" || uuid === "") throw corrupted(what, status, "standby.uuid is missing");
  if (address !== null && typeof address !== "string") throw corrupted(what, status, "standby.address must be a string or null");
  if (!isIsoTime(seenAt)) throw corrupted(what, status, "standby.seenAt must be an ISO-8601 time");
  return withPriority({ uuid, address, seenAt }, parsePriority(priority, "standby.priority", what, status));
}

function parsePrimary(value: unknown, what: string, status: number): PrimaryView | null {
  if (value === null) return null;
  if (!isObject(value)) throw corrupted(what, status, "primary must be an object or null");
  const { uuid, address, epoch, renewedAt, expiresInMs, revoked } = value;
  if (typeof uuid !== "string" || uuid === "") throw corrupted(what, status, "primary.uuid is missing");
  if (address !== null && typeof address !== "string") throw corrupted(what, status, "primary.address must be a string or null");
  if (!isNonNegativeInteger(epoch) || epoch < 1) throw corrupted(what, status, "primary.epoch must be a positive integer");
  if (typeof renewedAt !== "string" || Number.isNaN(Date.parse(renewedAt))) {
    throw corrupted(what, status, "primary.renewedAt must be an ISO-8601 time");
  }
  if (typeof expiresInMs !== "number" || !Number.isFinite(expiresInMs)) {
    throw corrupted(what, status, "primary.expiresInMs must be a number");
  }
  // Always sent by this version of the service; a service from before revocation omits it.
  if (revoked !== undefined && typeof revoked !== "boolean") throw corrupted(what, status, "primary.revoked must be a boolean");
  return withPriority({ uuid, address, epoch, renewedAt, expiresInMs, revoked: revoked === true }, parsePriority(value["priority"], "primary.priority", what, status));
}

/** A view's priority: absent (0), or an integer of the contract's range. */
function parsePriority(value: unknown, field: string, what: string, status: number): number | undefined {
  if (value === undefined) return undefined;
  if (!isPriority(value)) throw corrupted(what, status, `${field} must be ${PRIORITY_RULE}`);
  return value;
}

/** `view` with `priority` when it is not 0 (a view never shows 0). */
function withPriority<T extends object>(view: T, priority: number | undefined): T & { readonly priority?: number } {
  return priority === undefined || priority === 0 ? view : { ...view, priority };
}

/** The 200 answer to UpdateHeartBeat: a view whose primary is the caller, plus a token. */
export function parseAcceptedHeartbeat(body: unknown, utype: string, uuid: string, status: number, what: string): { view: LeaseView; lease: string } {
  const view = parseLeaseView(body, utype, status, what);
  const lease = (body as Json)["lease"];
  if (typeof lease !== "string" || lease === "") throw corrupted(what, status, "the accepted heartbeat carries no lease token");
  if (view.primary?.uuid !== uuid) throw corrupted(what, status, "the accepted heartbeat names another primary");
  return { view, lease };
}

/** The error object of a non-2xx answer, when it has the contract's shape. */
export function parseErrorBody(body: unknown): { code: string; message: string } | undefined {
  if (!isObject(body) || !isObject(body["error"])) return undefined;
  const { code, message } = body["error"];
  return typeof code === "string" && typeof message === "string" ? { code, message } : undefined;
}

export function parsePrimaryList(body: unknown, status: number, what: string): LeaseView[] {
  if (!isObject(body) || !Array.isArray(body["primaries"])) throw corrupted(what, status, "primaries must be an array");
  return body["primaries"].map((view) => parseLeaseView(view, undefined, status, what));
}

export function parseHealth(body: unknown, status: number, what: string): HealthView {
  if (!isObject(body)) throw corrupted(what, status, "the body is not a JSON object");
  const expected = status === 200 ? "ok" : "unavailable";
  if (body["status"] !== expected || typeof body["store"] !== "string") {
    throw corrupted(what, status, `expected {"status": "${expected}", "store": …}`);
  }
  return { status: expected, store: body["store"] };
}
