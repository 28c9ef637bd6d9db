import { CorruptedMessageError } from "./corrupted-message-error.js";
import { EndpointNotFoundError } from "./endpoint-not-found-error.js";
import { environmentDefault } from "./environment.js";
import { HaRequestError } from "./ha-request-error.js";
import type { HeartbeatBody } from "../contract/heartbeat-body.js";
import type { HealthView, LeaseView } from "../contract/lease-view.js";
import { REFUSED_OUTCOME_CODES, type HandoverResult, type HeartbeatResult, type ReleaseResult } from "../contract/outcomes.js";
import type { CallOptions, LeaseTransport, ReleaseOptions } from "./lease-transport.js";
import { MEMBER_REFUSED_CODES, type GroupList, type MemberHeartbeatBody, type MemberHeartbeatResult, type MemberLeaveResult, type MemberList } from "../contract/members.js";
import { parseAcceptedMemberHeartbeat, parseGroupList, parseMemberAnswer, parseMemberList } from "./member-response-validation.js";
import type { MembersTransport } from "./members-transport.js";
import { checkEndpoint, checkId, checkOptionalAddress, checkOptionalSignal, checkOptionalString, checkPositiveMs } from "./option-checks.js";
import {
  parseAcceptedHeartbeat,
  parseErrorBody,
  parseHealth,
  parseJsonBody,
  parseLeaseView,
  parsePrimaryList,
} from "./response-validation.js";
import { UnauthorizedError } from "./unauthorized-error.js";

export interface HaClientOptions {
  /** The service's base URL, e.g. http://127.0.0.1:7071/api or https://<app>.azurewebsites.net/api. Default: HA_ENDPOINT. */
  readonly endpoint?: string;
  /** The function key, sent in x-functions-key. Default: HA_API_KEY, if set. */
  readonly apiKey?: string;
  /** The budget of a call that names no timeout of its own. Default 10 000 ms. */
  readonly timeoutInMs?: number;
}

export const DEFAULT_CALL_TIMEOUT_MS = 10_000;

interface Answer {
  readonly status: number;
  readonly body: unknown;
  /** Retry-After, in ms, when the answer carried a usable one. */
  readonly retryAfterMs?: number | undefined;
}

/** The longest Retry-After taken at its word (an hour); a longer one is read as this. */
const MAX_RETRY_AFTER_MS = 3_600_000;

/** Retry-After as delta-seconds (RFC 9110 §10.2.3); an HTTP-date, or nonsense, is ignored. */
export function parseRetryAfter(value: string | null): number | undefined {
  if (value === null || !/^\s*[0-9]{1,10}\s*$/.test(value)) return undefined;
  return Math.min(MAX_RETRY_AFTER_MS, Number(value) * 1000);
}

/**
 * The typed REST client of the lease service (docs/api.md), on Node's fetch. Every answer is
 * validated before it is returned; 409 LeaseHeld / LeaseRevoked / Conflict (and, for
 * members, SessionHeld / SessionEnded) are outcomes, not errors.
 * Errors: HaRequestError (refused, unreachable, timed out; `retryable` says whether
 * sending it again may help), with UnauthorizedError (401: the key) and
 * EndpointNotFoundError (404: the endpoint) as its own classes, CorruptedMessageError (an
 * answer that cannot be trusted), or the caller's own abort reason.
 */
export class HaClient implements LeaseTransport, MembersTransport {
  readonly endpoint: string;
  readonly #apiKey: string | undefined;
  readonly #timeoutMs: number;

  constructor(options: HaClientOptions = {}) {
    if (typeof options !== "object" || options === null) {
      throw new TypeError("Expected the HaClient options to be an object such as { endpoint: \"http://127.0.0.1:7071/api\" }.");
    }
    const endpoint = options.endpoint ?? environmentDefault("HA_ENDPOINT");
    if (endpoint === undefined) {
      throw new TypeError("Expected `endpoint` (the service's base URL, e.g. http://127.0.0.1:7071/api) to be given, or HA_ENDPOINT to be set.");
    }
    this.endpoint = checkEndpoint(options.endpoint === undefined ? "HA_ENDPOINT" : "endpoint", endpoint);
    this.#apiKey = options.apiKey === undefined ? environmentDefault("HA_API_KEY") : checkOptionalString("apiKey", options.apiKey);
    this.#timeoutMs = checkPositiveMs("timeoutInMs", options.timeoutInMs, DEFAULT_CALL_TIMEOUT_MS);
  }

  /** GetPrimary: the live primary of `utype`, or `primary: null`; `standbys: true` adds the standbys seen within T. */
  async getPrimary(utype: string, options: CallOptions & { readonly standbys?: boolean } = {}): Promise<LeaseView> {
    const what = `GetPrimary(${checkId("utype", utype)})`;
    const path = `/primary/${utype}`;
    const answer = await this.#call("GET", options.standbys === true ? `${path}?standbys=true` : path, undefined, options, what);
    if (answer.status !== 200) throw refused(what, answer, this.endpoint, path);
    return parseLeaseView(answer.body, utype, answer.status, what);
  }

  /** UpdateHeartBeat: acquire, renew (fast path when `lease` is given) or take over. */
  async heartbeat(utype: string, body: HeartbeatBody, options: CallOptions = {}): Promise<HeartbeatResult> {
    const what = `UpdateHeartBeat(${checkId("utype", utype)})`;
    const uuid = checkId("uuid", body.uuid);
    // Omitted keeps the stored address; null clears it: the difference is sent as given.
    const address = body.address === null ? null : checkOptionalAddress("address", body.address);
    const lease = checkOptionalString("lease", body.lease);
    const announce = body.announce === true ? { announce: true } : {};
    const sent = JSON.stringify({ uuid, ...(address === undefined ? {} : { address }), ...(lease === undefined ? {} : { lease }), ...announce });
    const path = `/primary/${utype}`;
    const answer = await this.#call("PUT", path, sent, options, what);
    if (answer.status === 200) return { outcome: "accepted", ...parseAcceptedHeartbeat(answer.body, utype, uuid, answer.status, what) };
    const lost = lostOutcome(answer, utype, what);
    if (lost !== undefined) return lost;
    throw refused(what, answer, this.endpoint, path);
  }

  /**
   * Release. With `options.lease`, the holder's token, it clears the lease so a standby can
   * take it at once (`released`). Without it, a live lease of `uuid` is revoked instead
   * (`revoked`): nobody takes over before it expires. Either way `uuid` can never hold the
   * lease again.
   */
  async release(utype: string, uuid: string, options: ReleaseOptions = {}): Promise<ReleaseResult> {
    const what = `Release(${checkId("utype", utype)})`;
    const lease = checkOptionalString("lease", options.lease);
    const query = `?uuid=${encodeURIComponent(checkId("uuid", uuid))}${lease === undefined ? "" : `&lease=${encodeURIComponent(lease)}`}`;
    const path = `/primary/${utype}`;
    const answer = await this.#call("DELETE", `${path}${query}`, undefined, options, what);
    if (answer.status === 200) {
      const view = parseLeaseView(answer.body, utype, answer.status, what);
      return { outcome: view.primary?.uuid === uuid && view.primary.revoked ? "revoked" : "released", view };
    }
    const lost = lostOutcome(answer, utype, what);
    if (lost !== undefined) return lost;
    throw refused(what, answer, this.endpoint, path);
  }

  /**
   * A planned handover (docs/protocol.md#planned-handover): asks the primary of `utype` to
   * step down, to the standby `to` names (its uuid or address) or to any. `requested`: the
   * request stands (202); `no-primary` and `no-such-standby` (409) change nothing, the
   * latter with the standbys known. The handover itself happens at the holder's next renewal.
   */
  async handover(utype: string, options: CallOptions & { readonly to?: string } = {}): Promise<HandoverResult> {
    const what = `Handover(${checkId("utype", utype)})`;
    const to = checkOptionalString("to", options.to);
    const path = `/primary/${utype}/handover`;
    const answer = await this.#call("POST", path, JSON.stringify(to === undefined ? {} : { to }), options, what);
    if (answer.status === 202) return { outcome: "requested", view: parseLeaseView(answer.body, utype, answer.status, what) };
    if (answer.status === 409) {
      const code = parseErrorBody(answer.body)?.code;
      const view = parseLeaseView(answer.body, utype, answer.status, what);
      if (code === "NoPrimary") return { outcome: "no-primary", view };
      if (code === "NoSuchStandby") return { outcome: "no-such-standby", view, standbys: view.standbys ?? [] };
      if (code === "Conflict") return { outcome: "conflict", view };
    }
    throw refused(what, answer, this.endpoint, path);
  }

  /**
   * Name resolving: the live primary of every utype. `standbys: true` adds each role's
   * standbys; `vacant: true` adds the roles that had a primary and have none now (`vacantSince`).
   */
  async listPrimaries(options: CallOptions & { readonly standbys?: boolean; readonly vacant?: boolean } = {}): Promise<LeaseView[]> {
    const what = "ListPrimaries";
    const query = [options.standbys === true ? "standbys=true" : "", options.vacant === true ? "vacant=true" : ""].filter((part) => part !== "").join("&");
    const answer = await this.#call("GET", query === "" ? "/primary" : `/primary?${query}`, undefined, options, what);
    if (answer.status !== 200) throw refused(what, answer, this.endpoint, "/primary");
    return parsePrimaryList(answer.body, answer.status, what);
  }

  /** `ok` when the service reaches its store, `unavailable` when it answers 503. */
  async health(options: CallOptions = {}): Promise<HealthView> {
    const what = "Health";
    const answer = await this.#call("GET", "/health", undefined, options, what);
    if (answer.status === 200 || (answer.status === 503 && parseErrorBody(answer.body)?.code === "StoreUnavailable")) {
      return parseHealth(answer.body, answer.status, what);
    }
    throw refused(what, answer, this.endpoint, "/health");
  }

  /**
   * A member's heartbeat (docs/membership.md): join with a new session, renew (one store operation when
   * `token` is the last answer's), or replace a failed session. 409 SessionHeld,
   * SessionEnded and Conflict are outcomes (`held`, `ended`, `conflict`), not errors.
   */
  async memberHeartbeat(group: string, member: string, body: MemberHeartbeatBody, options: CallOptions = {}): Promise<MemberHeartbeatResult> {
    const what = `MemberHeartbeat(${checkId("group", group)}/${checkId("member", member)})`;
    const session = checkId("session", body.session);
    const address = body.address === null ? null : checkOptionalAddress("address", body.address);
    const token = checkOptionalString("token", body.token);
    const sent = JSON.stringify({ session, ...(address === undefined ? {} : { address }), ...(token === undefined ? {} : { token }) });
    const answer = await this.#call("PUT", `/members/${group}/${member}`, sent, options, what);
    if (answer.status === 200) return { outcome: "accepted", ...parseAcceptedMemberHeartbeat(answer.body, group, member, session, answer.status, what) };
    const code = answer.status === 409 ? parseErrorBody(answer.body)?.code : undefined;
    const outcome = (Object.keys(MEMBER_REFUSED_CODES) as (keyof typeof MEMBER_REFUSED_CODES)[]).find((candidate) => MEMBER_REFUSED_CODES[candidate] === code);
    if (outcome !== undefined) return { outcome, answer: parseMemberAnswer(answer.body, group, member, answer.status, what) };
    throw refused(what, answer, this.endpoint, `/members/${group}/${member}`);
  }

  /** Goodbye: the session is leaving at once. `held` when the row belongs to another session. */
  async leaveGroup(group: string, member: string, session: string, options: CallOptions = {}): Promise<MemberLeaveResult> {
    const what = `LeaveGroup(${checkId("group", group)}/${checkId("member", member)})`;
    const answer = await this.#call("DELETE", `/members/${group}/${member}?session=${encodeURIComponent(checkId("session", session))}`, undefined, options, what);
    if (answer.status === 200) return { outcome: "left", answer: parseMemberAnswer(answer.body, group, member, answer.status, what) };
    const code = answer.status === 409 ? parseErrorBody(answer.body)?.code : undefined;
    if (code === "SessionHeld" || code === "Conflict") {
      return { outcome: code === "SessionHeld" ? "held" : "conflict", answer: parseMemberAnswer(answer.body, group, member, answer.status, what) };
    }
    throw refused(what, answer, this.endpoint, `/members/${group}/${member}`);
  }

  /** The group's members with their states, judged by the service at one instant. */
  async listMembers(group: string, options: CallOptions = {}): Promise<MemberList> {
    const what = `ListMembers(${checkId("group", group)})`;
    const answer = await this.#call("GET", `/members/${group}`, undefined, options, what);
    if (answer.status !== 200) throw refused(what, answer, this.endpoint, `/members/${group}`);
    return parseMemberList(answer.body, group, answer.status, what);
  }

  /** Every group with its members counted by state. */
  async listGroups(options: CallOptions = {}): Promise<GroupList> {
    const what = "ListGroups";
    const answer = await this.#call("GET", "/members", undefined, options, what);
    if (answer.status !== 200) throw refused(what, answer, this.endpoint, "/members");
    return parseGroupList(answer.body, answer.status, what);
  }

  async #call(method: string, path: string, body: string | undefined, options: CallOptions, what: string): Promise<Answer> {
    const callerSignal = checkOptionalSignal("abortSignal", options.abortSignal);
    const timeoutMs = checkPositiveMs("timeoutInMs", options.timeoutInMs, this.#timeoutMs);
    callerSignal?.throwIfAborted();
    // AbortSignal.timeout takes whole milliseconds; round a computed budget up, never to 0.
    const timeout = AbortSignal.timeout(Math.max(1, Math.ceil(timeoutMs)));
    const signal = callerSignal === undefined ? timeout : AbortSignal.any([callerSignal, timeout]);
    const headers: Record<string, string> = { accept: "application/json" };
    if (body !== undefined) headers["content-type"] = "application/json";
    if (this.#apiKey !== undefined) headers["x-functions-key"] = this.#apiKey;
    try {
      const response = await fetch(`${this.endpoint}${path}`, { method, headers, body, signal });
      const text = await response.text();
      // A 200 or 409 promises a JSON body; any other status may come from a proxy or the
      // platform (a 502 page), which is a failed call, not a corrupted message.
      const promisesJson = response.ok || response.status === 409;
      const retryAfterMs = response.ok ? undefined : parseRetryAfter(response.headers.get("retry-after"));
      if (!promisesJson && !looksLikeJson(text)) return { status: response.status, body: undefined, retryAfterMs };
      return { status: response.status, body: parseJsonBody(text, response.status, what), retryAfterMs };
    } catch (error) {
      if (callerSignal?.aborted) throw callerSignal.reason;
      if (timeout.aborted) {
        throw new HaRequestError(`${what}: no answer from ${this.endpoint} within ${Math.ceil(timeoutMs)} ms.`, "Timeout", undefined, { cause: error });
      }
      if (error instanceof CorruptedMessageError) throw error;
      const reason = error instanceof Error && error.cause instanceof Error ? error.cause.message : String(error);
      throw new HaRequestError(`${what}: could not reach ${this.endpoint} (${reason}).`, "NetworkError", undefined, { cause: error });
    }
  }
}

function looksLikeJson(text: string): boolean {
  const first = text.trimStart()[0];
  return first === "{" || first === "[";
}

type RefusedOutcome = keyof typeof REFUSED_OUTCOME_CODES;

/** A 409 whose code is one of the refused outcomes, with the view it carries. */
function lostOutcome(answer: Answer, utype: string, what: string): { outcome: RefusedOutcome; view: LeaseView } | undefined {
  if (answer.status !== 409) return undefined;
  const code = parseErrorBody(answer.body)?.code;
  const outcome = (Object.keys(REFUSED_OUTCOME_CODES) as RefusedOutcome[]).find((candidate) => REFUSED_OUTCOME_CODES[candidate] === code);
  if (outcome === undefined) return undefined;
  return { outcome, view: parseLeaseView(answer.body, utype, answer.status, what) };
}

function refused(what: string, answer: Answer, endpoint: string, path: string): HaRequestError {
  const error = parseErrorBody(answer.body);
  // Errors no retry can fix get classes of their own, so a program can tell them apart.
  if (answer.status === 401) return new UnauthorizedError(what, endpoint, error?.message);
  if (answer.status === 404) return new EndpointNotFoundError(what, `${endpoint}${path}`, error?.message);
  const options = { retryAfterMs: answer.retryAfterMs };
  if (error === undefined) {
    return new HaRequestError(`${what}: unexpected ${answer.status} response without the contract's error body.`, "UnexpectedResponse", answer.status, options);
  }
  return new HaRequestError(`${what}: ${answer.status} ${error.code}: ${error.message}`, error.code, answer.status, options);
}
