import { CorruptedMessageError } from "./corrupted-message-error.js";
import { EndpointNotFoundError } from "./endpoint-not-found-error.js";
import { environmentDefault } from "../loop/environment.js";
import { HaRequestError } from "./ha-request-error.js";
import type { HeartbeatBody } from "../../contract/heartbeat-body.js";
import { isPriority, PRIORITY_RULE } from "../../contract/input-rules.js";
import type { HealthView, LeaseView } from "../../contract/lease-view.js";
import { REFUSED_OUTCOME_CODES, type HandoverResult, type HeartbeatResult, type ReleaseResult, type WithdrawResult } from "../../contract/outcomes.js";
import type { CallOptions, LeaseTransport, ReleaseOptions } from "./lease-transport.js";
import { MEMBER_REFUSED_CODES, type GroupList, type MemberHeartbeatBody, type MemberHeartbeatResult, type MemberLeaveResult, type MemberList } from "../../contract/members.js";
import { parseAcceptedMemberHeartbeat, parseGroupAnswer, parseGroupList, parseMemberAnswer, parseMemberList } from "./member-response-validation.js";
import type { GroupAnswer, MemberPart, ParticipantHeartbeatBody, ParticipantResults, PartAnswer, PartResult, RolePart } from "../../contract/participant.js";
import { callName } from "./call-names.js";
import { parseParticipantAnswer, readPart, settlePart } from "./participant-answer.js";
import type { ParticipantTransport } from "./participant-transport.js";
import type { MembersTransport } from "./members-transport.js";
import { checkEndpoints, checkId, checkOptionalAddress, checkOptionalSignal, checkOptionalString, checkOptionsObject, checkPositiveMs } from "../loop/option-checks.js";
import {
  parseAcceptedHeartbeat,
  parseErrorBody,
  parseHealth,
  parseJsonBody,
  parseLeaseView,
  parsePrimaryList,
  parseStandby,
} from "./response-validation.js";
import { UnauthorizedError } from "../auth/unauthorized-error.js";
import { ForbiddenError } from "../auth/forbidden-error.js";
import { ManagedIdentityCredential, type BearerTokenProvider } from "../auth/managed-identity.js";
import { systemElectorClock, type ElectorClock } from "../loop/elector-clock.js";
import { EndpointFailover, type Attempted, type EndpointFailure } from "./endpoint-failover.js";

/** What an HaClient takes: where the service is and how to authenticate; every field has a default from the environment. */
export interface HaClientOptions {
  /**
   * The service's base URL, e.g. http://127.0.0.1:7071/api or https://<app>.azurewebsites.net/api;
   * or several instances of one service (on one store), as an array or separated by commas:
   * a call that gets no answer or a 5xx from one goes to the next (docs/sdk.md#several-endpoints).
   * Default: HA_ENDPOINT.
   */
  readonly endpoint?: string | readonly string[];
  /** The function key, sent in x-functions-key. Default: HA_API_KEY, if set. */
  readonly apiKey?: string;
  /**
   * Where bearer tokens come from (sent in Authorization instead of a key), e.g. a
   * ManagedIdentityCredential. Default: with HA_AUTH=managed-identity, the managed identity
   * (HA_CLIENT_ID for a user-assigned one) for HA_AUTH_AUDIENCE. `null`: none, whatever HA_AUTH says.
   */
  readonly credential?: BearerTokenProvider | null;
  /**
   * The budget of a call that names no timeout of its own, shared among the endpoints
   * when there are several (docs/sdk.md#several-endpoints). Default 10 000 ms.
   */
  readonly timeoutInMs?: number;
  /** Monotonic time and timers for the calls' budgets, as the loops take it; defaults to performance.now() and the process's timers. */
  readonly clock?: ElectorClock;
}

export const DEFAULT_CALL_TIMEOUT_MS = 10_000;

interface Answer {
  /** Who answered. */
  readonly endpoint: string;
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
 * answer that cannot be trusted), or the caller's own abort reason. Given several endpoints
 * (instances of one service on one store), each call goes to them as EndpointFailover says:
 * the one that answered last first, the next on no answer or a 5xx; an error names the
 * endpoint that answered, or each that did not.
 */
export class HaClient implements LeaseTransport, MembersTransport, ParticipantTransport {
  /** Every endpoint, in the order given: the instances of the service this client spreads its calls over. */
  readonly endpoints: readonly string[];
  readonly #failover: EndpointFailover;
  readonly #clock: ElectorClock;
  readonly #apiKey: string | undefined;
  readonly #credential: BearerTokenProvider | undefined;
  readonly #timeoutMs: number;
  /** The service answered 404 to POST /api/heartbeat: participant heartbeats go part by part through the single routes. */
  #singleRoutes = false;
  /** Who this client authenticates as, for start lines: the managed identity and audience, "a function key", or "no credentials". */
  readonly identity: string;
  /** Whether it sends a bearer token (a credential) rather than a key: what a 401 refused. */
  readonly sendsToken: boolean;

  constructor(options: HaClientOptions = {}) {
    checkOptionsObject("the HaClient options", options, '{ endpoint: "http://127.0.0.1:7071/api" }');
    const endpoint = options.endpoint ?? environmentDefault("HA_ENDPOINT");
    if (endpoint === undefined) {
      throw new TypeError("Expected `endpoint` (the service's base URL, e.g. http://127.0.0.1:7071/api) to be given, or HA_ENDPOINT to be set.");
    }
    this.endpoints = Object.freeze(checkEndpoints(options.endpoint === undefined ? "HA_ENDPOINT" : "endpoint", endpoint));
    this.#clock = checkClock(options.clock);
    this.#failover = new EndpointFailover(this.endpoints, this.#clock);
    this.#apiKey = options.apiKey === undefined ? environmentDefault("HA_API_KEY") : checkOptionalString("apiKey", options.apiKey);
    this.#credential = options.credential === undefined ? credentialFromEnvironment() : options.credential === null ? undefined : checkCredential(options.credential);
    this.identity = this.#credential?.description ?? (this.#apiKey === undefined ? "no credentials" : "a function key");
    this.sendsToken = this.#credential !== undefined;
    this.#timeoutMs = checkPositiveMs("timeoutInMs", options.timeoutInMs, DEFAULT_CALL_TIMEOUT_MS);
  }

  /** The endpoint the next call goes to first: the one that answered last (docs/sdk.md#several-endpoints). */
  get endpoint(): string {
    return this.#failover.current;
  }

  /** GetPrimary: the live primary of `utype`, or `primary: null`; `standbys: true` adds the standbys seen within T. */
  async getPrimary(utype: string, options: CallOptions & { readonly standbys?: boolean } = {}): Promise<LeaseView> {
    const what = callName.getPrimary(utype);
    const path = `/primary/${utype}`;
    const answer = await this.#call("GET", options.standbys === true ? `${path}?standbys=true` : path, undefined, options, what);
    return readPrimary(answer, utype, what, this);
  }

  /** UpdateHeartBeat: acquire, renew (fast path when `lease` is given) or take over. */
  async heartbeat(utype: string, body: HeartbeatBody, options: CallOptions = {}): Promise<HeartbeatResult> {
    const what = callName.heartbeat(utype);
    const sent = heartbeatRequest(body);
    const answer = await this.#call("PUT", `/primary/${utype}`, JSON.stringify(sent), options, what);
    return readHeartbeat(answer, utype, sent.uuid, what, this);
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
    throw refused(what, answer, this, path);
  }

  /**
   * A standby's withdrawal (DELETE ?uuid=…&standby=true, docs/protocol.md#standbys): the
   * elector's stop() sends it for the uuid it last announced, so that the standby is gone
   * from `?standbys=true` and from `handover --to` at once, not T later. `withdrawn` with
   * the view; `conflict` (409) when dropping a handover that named it kept losing races.
   */
  async withdraw(utype: string, uuid: string, options: CallOptions = {}): Promise<WithdrawResult> {
    const what = `Withdraw(${checkId("utype", utype)})`;
    const path = `/primary/${utype}`;
    const answer = await this.#call("DELETE", `${path}?uuid=${encodeURIComponent(checkId("uuid", uuid))}&standby=true`, undefined, options, what);
    if (answer.status === 200) return { outcome: "withdrawn", view: parseLeaseView(answer.body, utype, answer.status, what) };
    if (answer.status === 409 && parseErrorBody(answer.body)?.code === "Conflict") return { outcome: "conflict", view: parseLeaseView(answer.body, utype, answer.status, what) };
    throw refused(what, answer, this, path);
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
      if (code === "NoSuchStandby") {
        const lastSeen = (answer.body as { lastSeen?: unknown }).lastSeen;
        return { outcome: "no-such-standby", view, standbys: view.standbys ?? [], ...(lastSeen === undefined ? {} : { lastSeen: parseStandby(lastSeen, what, answer.status) }) };
      }
      if (code === "Conflict") return { outcome: "conflict", view };
    }
    throw refused(what, answer, this, path);
  }

  /**
   * Name resolving: the live primary of every utype. `standbys: true` adds each role's
   * standbys; `vacant: true` adds the roles that had a primary and have none now (`vacantSince`).
   */
  async listPrimaries(options: CallOptions & { readonly standbys?: boolean; readonly vacant?: boolean } = {}): Promise<LeaseView[]> {
    const what = "ListPrimaries";
    const query = [options.standbys === true ? "standbys=true" : "", options.vacant === true ? "vacant=true" : ""].filter((part) => part !== "").join("&");
    const answer = await this.#call("GET", query === "" ? "/primary" : `/primary?${query}`, undefined, options, what);
    if (answer.status !== 200) throw refused(what, answer, this, "/primary");
    return parsePrimaryList(answer.body, answer.status, what);
  }

  /** `ok` when the service reaches its store, `unavailable` when it answers 503. */
  async health(options: CallOptions = {}): Promise<HealthView> {
    const what = "Health";
    const answer = await this.#call("GET", "/health", undefined, options, what);
    if (answer.status === 200 || (answer.status === 503 && parseErrorBody(answer.body)?.code === "StoreUnavailable")) {
      return parseHealth(answer.body, answer.status, what);
    }
    throw refused(what, answer, this, "/health");
  }

  /**
   * A member's heartbeat (docs/membership.md): join with a new session, renew (one store operation when
   * `token` is the last answer's), or replace a failed session. 409 SessionHeld,
   * SessionEnded and Conflict are outcomes (`held`, `ended`, `conflict`), not errors.
   */
  async memberHeartbeat(group: string, member: string, body: MemberHeartbeatBody, options: CallOptions = {}): Promise<MemberHeartbeatResult> {
    const what = callName.memberHeartbeat(group, member);
    const sent = memberHeartbeatRequest(body);
    const answer = await this.#call("PUT", `/members/${group}/${member}`, JSON.stringify(sent), options, what);
    return readMemberHeartbeat(answer, group, member, sent.session, what, this);
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
    throw refused(what, answer, this, `/members/${group}/${member}`);
  }

  /** The group's members with their states, judged by the service at one instant. */
  async listMembers(group: string, options: CallOptions = {}): Promise<MemberList> {
    const what = callName.listMembers(group);
    const answer = await this.#call("GET", `/members/${group}`, undefined, options, what);
    return readMemberList(answer, group, what, this);
  }

  /**
   * A participant heartbeat (docs/api.md#participant-heartbeat): every part in one POST
   * /api/heartbeat. Each part's status and body are read by the very function its single
   * call reads its own answer with, so each result is what that call would have returned
   * or thrown. A failure of the whole request is thrown. A service without the route (404:
   * an older version) is asked through the single routes from then on, each part on its own.
   */
  async participantHeartbeat(body: ParticipantHeartbeatBody, options: CallOptions = {}): Promise<ParticipantResults> {
    const what = "ParticipantHeartbeat";
    const sent = participantRequest(body);
    if (this.#singleRoutes) return this.#singly(sent, options);
    const answer = await this.#call("POST", "/heartbeat", JSON.stringify(sent), options, what, participantKeys(sent));
    if (answer.status === 404) {
      this.#singleRoutes = true;
      return this.#singly(sent, options);
    }
    if (answer.status !== 200) throw refused(what, answer, this, "/heartbeat");
    const parts = parseParticipantAnswer(answer.body, sent, answer.status, what);
    const read = <T>(part: PartAnswer, reader: (answer: Answer) => T): PartResult<T> => readPart(() => reader(partAnswer(part, answer.endpoint)));
    return {
      roles: parts.roles.map((part, i) => read(part, (a) => readHeartbeat(a, sent.roles![i]!.utype, sent.roles![i]!.uuid, callName.heartbeat(part.utype), this))),
      reads: parts.reads.map((part) => read(part, (a) => readPrimary(a, part.utype, callName.getPrimary(part.utype), this))),
      members: parts.members.map((part, i) => read(part, (a) => readMemberHeartbeat(a, part.group, part.member, sent.members![i]!.session, callName.memberHeartbeat(part.group, part.member), this))),
      groups: parts.groups.map((part) => read(part, (a) => readGroup(a, part.group, callName.listMembers(part.group), this))),
    };
  }

  /** Each part through its own route, as a service without the participant route needs. A listing has no cursor there (""). */
  async #singly(body: ParticipantHeartbeatBody, options: CallOptions): Promise<ParticipantResults> {
    const [roles, reads, members, groups] = await Promise.all([
      Promise.all((body.roles ?? []).map(({ utype, ...heartbeat }) => settlePart(() => this.heartbeat(utype, heartbeat, options)))),
      Promise.all((body.reads ?? []).map(({ utype, standbys }) => settlePart(() => this.getPrimary(utype, { ...options, ...(standbys === true ? { standbys } : {}) })))),
      Promise.all((body.members ?? []).map(({ group, member, ...heartbeat }) => settlePart(() => this.memberHeartbeat(group, member, heartbeat, options)))),
      Promise.all((body.groups ?? []).map(({ group }) => settlePart(async () => ({ ...(await this.listMembers(group, options)), cursor: "" })))),
    ]);
    return { roles, reads, members, groups };
  }

  /** Every group with its members counted by state. */
  async listGroups(options: CallOptions = {}): Promise<GroupList> {
    const what = "ListGroups";
    const answer = await this.#call("GET", "/members", undefined, options, what);
    if (answer.status !== 200) throw refused(what, answer, this, "/members");
    return parseGroupList(answer.body, answer.status, what);
  }

  /** The credential's token; one it cannot get is a failed call a retry may fix (IMDS or Entra busy). */
  async #bearer(signal: AbortSignal, what: string): Promise<string> {
    try {
      return await (this.#credential as BearerTokenProvider).getToken({ abortSignal: signal });
    } catch (error) {
      if (signal.aborted) throw error;
      throw new HaRequestError(`${what}: ${error instanceof Error ? error.message : String(error)}`, "CredentialUnavailable", undefined, { cause: error });
    }
  }

  /**
   * One call, over the endpoints as EndpointFailover chooses them, within one budget: the
   * caller's `timeoutInMs`, or the client's (then `split` among the endpoints, since no
   * loop of the caller's retries it). `keys`: what it asks, by the single routes' names.
   */
  async #call(method: string, path: string, body: string | undefined, options: CallOptions, what: string, keys: readonly string[] = [routeKey(method, path)]): Promise<Answer> {
    const callerSignal = checkOptionalSignal("abortSignal", options.abortSignal);
    const timeoutMs = checkPositiveMs("timeoutInMs", options.timeoutInMs, this.#timeoutMs);
    callerSignal?.throwIfAborted();
    const deadline = this.#clock.now() + timeoutMs;
    const budget = new AbortController();
    const timer = this.#clock.setTimeout(() => budget.abort(new DOMException(`${what}: no answer within ${Math.ceil(timeoutMs)} ms.`, "TimeoutError")), timeoutMs);
    const timeout = budget.signal;
    const signal = callerSignal === undefined ? timeout : AbortSignal.any([callerSignal, timeout]);
    const noAnswer = (waiting: readonly string[], failures: readonly EndpointFailure[], cause: unknown): HaRequestError =>
      new HaRequestError(`${what}: no answer from ${waiting.join(" or ")} within ${Math.ceil(timeoutMs)} ms${failuresBefore(failures)}.`, "Timeout", undefined, { cause });
    const headers: Record<string, string> = { accept: "application/json" };
    if (body !== undefined) headers["content-type"] = "application/json";
    try {
      try {
        // One token for every endpoint: they are instances of one app, with one audience.
        if (this.#credential !== undefined) headers["authorization"] = `Bearer ${await this.#bearer(signal, what)}`;
        else if (this.#apiKey !== undefined) headers["x-functions-key"] = this.#apiKey;
      } catch (error) {
        if (callerSignal?.aborted) throw callerSignal.reason;
        if (timeout.aborted) throw noAnswer([this.endpoint], [], error);
        throw error;
      }
      const result = await this.#failover.call<Answer | CorruptedMessageError>({
        keys,
        deadline,
        split: options.timeoutInMs === undefined,
        budget: timeout,
        caller: callerSignal,
        attempt: (endpoint, attemptSignal) => attempt(endpoint, { method, path, headers, body, signal: attemptSignal, what }),
      });
      switch (result.kind) {
        case "answer":
          if (result.value instanceof CorruptedMessageError) throw result.value;
          return result.value;
        case "aborted":
          throw callerSignal?.reason;
        case "timed-out":
          throw noAnswer(result.waiting.length === 0 ? [this.endpoint] : result.waiting, result.failures, result.failures.at(-1)?.error);
        case "failed":
          throw new HaRequestError(`${what}: could not reach ${describeFailures(result.failures)}.`, "NetworkError", undefined, { cause: result.failures.at(-1)?.error });
      }
    } finally {
      this.#clock.clearTimeout(timer);
    }
  }
}

interface Request {
  readonly method: string;
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body: string | undefined;
  readonly signal: AbortSignal;
  readonly what: string;
}

/**
 * One request to one endpoint. A 5xx is this instance's answer alone (`unavailable`): the
 * next endpoint may answer. A fetch that fails is no answer at all (it rejects).
 */
async function attempt(endpoint: string, { method, path, headers, body, signal, what }: Request): Promise<Attempted<Answer | CorruptedMessageError>> {
  const response = await fetch(`${endpoint}${path}`, { method, headers, body, signal });
  const text = await response.text();
  const kind = response.status >= 500 ? "unavailable" : "answer";
  // A 200 or 409 promises a JSON body; any other status may come from a proxy or the
  // platform (a 502 page), which is a failed call, not a corrupted message.
  const promisesJson = response.ok || response.status === 409;
  const retryAfterMs = response.ok ? undefined : parseRetryAfter(response.headers.get("retry-after"));
  if (!promisesJson && !looksLikeJson(text)) return { kind, value: { endpoint, status: response.status, body: undefined, retryAfterMs } };
  try {
    return { kind, value: { endpoint, status: response.status, body: parseJsonBody(text, response.status, what), retryAfterMs } };
  } catch (error) {
    if (error instanceof CorruptedMessageError) return { kind, value: error };
    throw error;
  }
}

/** What a request asks, as a copy of it would ask it again: its method and path, without the query. */
function routeKey(method: string, path: string): string {
  return `${method} ${path.split("?")[0]}`;
}

/** A participant heartbeat asks what each of its parts' single calls asks. */
function participantKeys(body: ParticipantHeartbeatBody): string[] {
  return [
    ...(body.roles ?? []).map(({ utype }) => routeKey("PUT", `/primary/${utype}`)),
    ...(body.reads ?? []).map(({ utype }) => routeKey("GET", `/primary/${utype}`)),
    ...(body.members ?? []).map(({ group, member }) => routeKey("PUT", `/members/${group}/${member}`)),
    ...(body.groups ?? []).map(({ group }) => routeKey("GET", `/members/${group}`)),
  ];
}

/** Why a fetch failed, as Node's fetch tells it (its cause: connect ECONNREFUSED …). */
function networkReason(error: unknown): string {
  return error instanceof Error && error.cause instanceof Error ? error.cause.message : String(error);
}

/** Each endpoint that could not be reached, with why: "http://a/api (connect ECONNREFUSED …), nor http://b/api (…)". */
function describeFailures(failures: readonly EndpointFailure[]): string {
  return failures.map(({ endpoint, error }) => `${endpoint} (${networkReason(error)})`).join(", nor ");
}

function failuresBefore(failures: readonly EndpointFailure[]): string {
  return failures.length === 0 ? "" : `; could not reach ${describeFailures(failures)}`;
}

/** HA_AUTH=managed-identity: the managed identity (HA_CLIENT_ID for a user-assigned one) for HA_AUTH_AUDIENCE; otherwise none. */
function credentialFromEnvironment(env: NodeJS.ProcessEnv = process.env): BearerTokenProvider | undefined {
  const auth = env["HA_AUTH"]?.trim().toLowerCase();
  if (auth === undefined || auth === "" || auth === "key") return undefined;
  if (auth !== "managed-identity") throw new TypeError(`HA_AUTH must be key or managed-identity (got ${JSON.stringify(env["HA_AUTH"])}).`);
  const audience = env["HA_AUTH_AUDIENCE"]?.split(",")[0]?.trim();
  if (audience === undefined || audience === "") {
    throw new TypeError("HA_AUTH=managed-identity needs HA_AUTH_AUDIENCE: the service's application id URI (api://…) or client id, what its own HA_AUTH_AUDIENCE accepts.");
  }
  const clientId = env["HA_CLIENT_ID"]?.trim();
  return new ManagedIdentityCredential({ audience, ...(clientId === undefined || clientId === "" ? {} : { clientId }), env });
}

function checkClock(clock: ElectorClock | undefined): ElectorClock {
  if (clock === undefined) return systemElectorClock;
  if (typeof clock?.now !== "function" || typeof clock.setTimeout !== "function" || typeof clock.clearTimeout !== "function") {
    throw new TypeError("Expected `clock` to have now(), setTimeout() and clearTimeout().");
  }
  return clock;
}

function checkCredential(credential: BearerTokenProvider): BearerTokenProvider {
  if (typeof credential?.getToken !== "function" || typeof credential.description !== "string") {
    throw new TypeError("Expected `credential` to have getToken() and a description, e.g. new ManagedIdentityCredential({ audience: \"api://ha-module\" }).");
  }
  return credential;
}

function looksLikeJson(text: string): boolean {
  const first = text.trimStart()[0];
  return first === "{" || first === "[";
}

/** Who a refusal names: the identity the client authenticates as, and whether it sends a token (what a 401 refused). */
interface Caller {
  readonly identity: string;
  readonly sendsToken: boolean;
}

/** A part of a participant heartbeat's answer, as a single call's answer (Retry-After in seconds there). */
function partAnswer(part: PartAnswer, endpoint: string): Answer {
  return { endpoint, status: part.status, body: part.body, retryAfterMs: part.retryAfter === undefined ? undefined : Math.min(MAX_RETRY_AFTER_MS, part.retryAfter * 1000) };
}

/** The body of PUT /api/primary/{utype}, checked. Omitted keeps the stored address; null clears it: the difference is sent as given. */
function heartbeatRequest(body: HeartbeatBody): HeartbeatBody {
  const uuid = checkId("uuid", body.uuid);
  const address = body.address === null ? null : checkOptionalAddress("address", body.address);
  const lease = checkOptionalString("lease", body.lease);
  const priority: unknown = body.priority;
  if (priority !== undefined && !isPriority(priority)) throw new TypeError(`Expected \`priority\` to be ${PRIORITY_RULE}, got ${typeof priority === "number" ? String(priority) : typeof priority}.`);
  // A priority of 0 and preempt false are the defaults: sent as a caller without priorities sends them (not at all).
  return {
    uuid,
    ...(address === undefined ? {} : { address }),
    ...(lease === undefined ? {} : { lease }),
    ...(body.announce === true ? { announce: true } : {}),
    ...(priority === undefined || priority === 0 ? {} : { priority }),
    ...(body.preempt === true ? { preempt: true } : {}),
  };
}

/** The body of PUT /api/members/{group}/{member}, checked. */
function memberHeartbeatRequest(body: MemberHeartbeatBody): MemberHeartbeatBody {
  const session = checkId("session", body.session);
  const address = body.address === null ? null : checkOptionalAddress("address", body.address);
  const token = checkOptionalString("token", body.token);
  return { session, ...(address === undefined ? {} : { address }), ...(token === undefined ? {} : { token }) };
}

/** The body of POST /api/heartbeat: each part checked as its single call checks it. */
function participantRequest(body: ParticipantHeartbeatBody): ParticipantHeartbeatBody & { readonly roles?: readonly RolePart[]; readonly members?: readonly MemberPart[] } {
  if (typeof body !== "object" || body === null) throw new TypeError("Expected a participant heartbeat body such as { roles: [{ utype, uuid }] }.");
  const list = <T>(name: string, value: readonly T[] | undefined): readonly T[] | undefined => {
    if (value !== undefined && !Array.isArray(value)) throw new TypeError(`Expected \`${name}\` to be an array.`);
    return value === undefined || value.length === 0 ? undefined : value;
  };
  const roles = list("roles", body.roles)?.map(({ utype, ...heartbeat }) => ({ utype: checkId("utype", utype), ...heartbeatRequest(heartbeat) }));
  const reads = list("reads", body.reads)?.map(({ utype, standbys }) => ({ utype: checkId("utype", utype), ...(standbys === true ? { standbys } : {}) }));
  const members = list("members", body.members)?.map(({ group, member, ...heartbeat }) => ({ group: checkId("group", group), member: checkId("member", member), ...memberHeartbeatRequest(heartbeat) }));
  const groups = list("groups", body.groups)?.map(({ group, since }) => ({ group: checkId("group", group), ...(since === undefined || since === "" ? {} : { since: checkOptionalString("since", since) }) }));
  if (roles === undefined && reads === undefined && members === undefined && groups === undefined) throw new TypeError("Expected at least one part in the participant heartbeat.");
  return { ...(roles === undefined ? {} : { roles }), ...(reads === undefined ? {} : { reads }), ...(members === undefined ? {} : { members }), ...(groups === undefined ? {} : { groups }) };
}

/*
 * How each single call reads its answer. A participant heartbeat reads each part's status
 * and body with the same function, so a part means exactly what its own route's answer means.
 */

/** GetPrimary (and a read part): 200 with the view, anything else refused. */
function readPrimary(answer: Answer, utype: string, what: string, caller: Caller): LeaseView {
  if (answer.status !== 200) throw refused(what, answer, caller, `/primary/${utype}`);
  return parseLeaseView(answer.body, utype, answer.status, what);
}

/** UpdateHeartBeat (and a role part): accepted with its token, a refused outcome with its view, or an error. */
function readHeartbeat(answer: Answer, utype: string, uuid: string, what: string, caller: Caller): HeartbeatResult {
  if (answer.status === 200) return { outcome: "accepted", ...parseAcceptedHeartbeat(answer.body, utype, uuid, answer.status, what) };
  const lost = lostOutcome(answer, utype, what);
  if (lost !== undefined) return lost;
  throw refused(what, answer, caller, `/primary/${utype}`);
}

/** A member heartbeat (and a member part): accepted with its token, SessionHeld, SessionEnded or Conflict as outcomes, or an error. */
function readMemberHeartbeat(answer: Answer, group: string, member: string, session: string, what: string, caller: Caller): MemberHeartbeatResult {
  if (answer.status === 200) return { outcome: "accepted", ...parseAcceptedMemberHeartbeat(answer.body, group, member, session, answer.status, what) };
  const code = answer.status === 409 ? parseErrorBody(answer.body)?.code : undefined;
  const outcome = (Object.keys(MEMBER_REFUSED_CODES) as (keyof typeof MEMBER_REFUSED_CODES)[]).find((candidate) => MEMBER_REFUSED_CODES[candidate] === code);
  if (outcome !== undefined) return { outcome, answer: parseMemberAnswer(answer.body, group, member, answer.status, what) };
  throw refused(what, answer, caller, `/members/${group}/${member}`);
}

/** ListMembers: 200 with the listing, anything else refused. */
function readMemberList(answer: Answer, group: string, what: string, caller: Caller): MemberList {
  if (answer.status !== 200) throw refused(what, answer, caller, `/members/${group}`);
  return parseMemberList(answer.body, group, answer.status, what);
}

/** A group part: ListMembers' reading, with the cursor, or `unchanged` since the cursor sent. */
function readGroup(answer: Answer, group: string, what: string, caller: Caller): GroupAnswer {
  if (answer.status !== 200) throw refused(what, answer, caller, `/members/${group}`);
  return parseGroupAnswer(answer.body, group, answer.status, what);
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

/** A refusal names the endpoint that answered, and the identity the client authenticates as. */
function refused(what: string, { endpoint, ...answer }: Answer, { identity, sendsToken }: Caller, path: string): HaRequestError {
  const error = parseErrorBody(answer.body);
  // Errors no retry can fix get classes of their own, so a program can tell them apart.
  if (answer.status === 401) return new UnauthorizedError(what, endpoint, error?.message, sendsToken ? { identity } : undefined);
  if (answer.status === 403 && error?.code === "Forbidden") return new ForbiddenError(what, identity, error.message);
  if (answer.status === 404) return new EndpointNotFoundError(what, `${endpoint}${path}`, error?.message, endpoint);
  const options = { retryAfterMs: answer.retryAfterMs };
  if (error === undefined) {
    return new HaRequestError(`${what}: unexpected ${answer.status} response without the contract's error body.`, "UnexpectedResponse", answer.status, options);
  }
  return new HaRequestError(`${what}: ${answer.status} ${error.code}: ${error.message}`, error.code, answer.status, options);
}
