import { timingSafeEqual } from "node:crypto";
import type { AuthConfig, NamedKey } from "../config/auth-config.js";
import { errorResponse } from "./answers.js";
import type { HttpResponseInit } from "./azure-functions.js";
import type { HandlerRequest } from "./handler-request.js";
import { parseLease } from "./validation.js";
import type { Granted } from "./granted.js";
import type { Operation } from "./route.js";
import { IdentityProviderUnavailableError, TokenRefusedError, TokenVerifier, type TokenVerifierOptions } from "./token-verifier.js";

/**
 * Who made a request: an identity proven by its Entra token, a named key, or (when this
 * code checks nothing) someone the platform let through: Azure's function-key check, or a
 * local host with no key.
 */
export type Caller =
  | { readonly kind: "identity"; readonly objectId: string | undefined; readonly appId: string | undefined }
  | { readonly kind: "key"; readonly name: string }
  | { readonly kind: "unchecked" };

/** What a write needs: an action of a grant on a role or a group. */
export interface Need {
  readonly action: "hold" | "revoke" | "join";
  readonly on: "role" | "group";
  readonly name: string;
}

/** What a row of WRITE_NEEDS reads of a request: its path parameters and query. */
export type NeedRequest = Pick<HandlerRequest, "params" | "query">;

/**
 * A row of WRITE_NEEDS whose request is a set of parts, each checked as the route it stands
 * for (Granted.refusal): the request itself needs only an authenticated caller.
 */
export const PER_PART = "per part";

/**
 * Every write operation of the route table, with what it needs (docs/deploy.md#grants).
 * A new write route gets its row here; one without a row is refused to every caller while
 * grants are on, so that a route nobody classified is closed, not open. Reads (GET) need
 * only an authenticated caller.
 */
export const WRITE_NEEDS: Readonly<Record<string, (request: NeedRequest) => Need | typeof PER_PART>> = {
  updateHeartBeat: (request) => ({ action: "hold", on: "role", name: request.params["utype"] ?? "" }),
  // With the holder's token a release, without it a revoke. A token that does not prove the
  // holder makes the service revoke too: it is told whether this caller may (Granted). A
  // standby's withdrawal (standby=true) is a participant's act, as its announcement is: hold.
  releasePrimary: (request) => ({
    action: parseLease(request.query.get("lease") ?? undefined) === undefined && !["true", ""].includes(request.query.get("standby") ?? "false") ? "revoke" : "hold",
    on: "role",
    name: request.params["utype"] ?? "",
  }),
  // Asking a holder to step down is an operator's act on someone else's lease, as a revoke is.
  handoverPrimary: (request) => ({ action: "revoke", on: "role", name: request.params["utype"] ?? "" }),
  updateMemberHeartBeat: (request) => ({ action: "join", on: "group", name: request.params["group"] ?? "" }),
  leaveGroup: (request) => ({ action: "join", on: "group", name: request.params["group"] ?? "" }),
  // One request for a participant's roles, member heartbeat and group polls: each role part
  // needs what updateHeartBeat needs (hold), each member part what updateMemberHeartBeat
  // needs (join); reads and group polls, as their GET routes, nothing beyond authentication.
  participantHeartbeat: () => PER_PART,
};

export interface Access {
  /** How the Functions host registers the routes: "anonymous" when this code checks callers, "function" when the platform's keys do. */
  readonly authLevel: "anonymous" | "function";
  /** The request's caller, or the 401 (or 503) answer that refuses it. */
  authenticate(request: Pick<HandlerRequest, "headers" | "query">): Promise<Caller | HttpResponseInit>;
  /** The 403 answer when `caller` may not call `operation` so, or what it was granted. */
  authorize(operation: Operation, request: HandlerRequest, caller: Caller): HttpResponseInit | Granted;
}

const ALL: Granted = { mayRevoke: true, refusal: () => undefined };

/** Azure without auth settings: the Functions host checks function keys, and every caller it lets in may do everything. */
export const PLATFORM_KEYS: Access = {
  authLevel: "function",
  authenticate: () => Promise.resolve({ kind: "unchecked" }),
  authorize: () => ALL,
};

export function isCaller(value: Caller | HttpResponseInit): value is Caller {
  return "kind" in value;
}

/** The access rules of `config`: tokens, named keys, grants; with none of them, anyone may do everything. */
export function createAccess(config: AuthConfig, options: TokenVerifierOptions = {}): Access {
  const verifier = config.identity === undefined ? undefined : new TokenVerifier(config.identity, options);
  const checks = verifier !== undefined || config.keys.length > 0;
  const how = [verifier === undefined ? undefined : `a Microsoft Entra token for ${config.identity?.audiences.join(" or ")} in Authorization: Bearer`, config.keys.length > 0 ? "a key in x-functions-key" : undefined]
    .filter((text) => text !== undefined)
    .join(", or ");
  // A wrong key is told what a missing one is: nothing about which keys exist.
  const askFor = verifier === undefined ? "Send the API key in the x-functions-key header." : `Send ${how}.`;
  return {
    authLevel: "anonymous",
    async authenticate(request) {
      // Without token settings an Authorization header is not ours to read (as before tokens were accepted).
      const authorization = verifier === undefined ? null : request.headers.get("authorization");
      if (verifier !== undefined && authorization !== null) {
        const bearer = /^Bearer +([^ ]+) *$/i.exec(authorization)?.[1];
        if (bearer === undefined) return unauthorized("The Authorization header must be `Bearer <token>`.");
        try {
          const identity = await verifier.verify(bearer);
          return { kind: "identity", ...identity };
        } catch (error) {
          if (error instanceof TokenRefusedError) return unauthorized(error.message);
          if (error instanceof IdentityProviderUnavailableError) return errorResponse("IdentityUnavailable", `${error.message} Retry shortly.`);
          throw error;
        }
      }
      const given = request.headers.get("x-functions-key") ?? request.query.get("code");
      if (given !== null && config.keys.length > 0) {
        const key = matchingKey(config.keys, given);
        return key === undefined ? unauthorized(askFor) : { kind: "key", name: key.name };
      }
      if (!checks) return { kind: "unchecked" };
      return unauthorized(askFor);
    },
    authorize(operation, request, caller) {
      const grants = config.grants;
      if (grants === undefined || operation.method === "GET") return ALL;
      const mine = grants.filter((grant) => grant.callers.some((entry) => callerIs(entry, caller)));
      const check = (name: string, needing: NeedRequest): HttpResponseInit | Granted => {
        const needOf = Object.hasOwn(WRITE_NEEDS, name) ? WRITE_NEEDS[name] : undefined;
        if (needOf === undefined) {
          return errorResponse("Forbidden", `${name} is not covered by any grant, so no caller may call it while HA_GRANTS is set.`);
        }
        const need = needOf(needing);
        if (need === PER_PART) {
          return {
            mayRevoke: false,
            refusal: (part, params) => {
              const answer = check(part, { params, query: NO_QUERY });
              return "mayRevoke" in answer ? undefined : answer;
            },
          };
        }
        const allowed = (action: Need["action"]): boolean => mine.some((grant) => grant[action].some((pattern) => matches(pattern, need.name)));
        if (!allowed(need.action)) {
          return errorResponse(
            "Forbidden",
            `${describeCaller(caller)} may not ${VERBS[need.action]} the ${need.on} ${JSON.stringify(need.name.slice(0, 128))}: no grant of HA_GRANTS names it with "${need.action}" matching ${JSON.stringify(need.name.slice(0, 128))}.`,
            { missing: { [need.action]: need.name.slice(0, 128), caller: callerName(caller) } },
          );
        }
        return { mayRevoke: need.action === "revoke" || (need.on === "role" && allowed("revoke")), refusal: () => undefined };
      };
      return check(operation.name, request);
    },
  };
}

const NO_QUERY = new URLSearchParams();

const VERBS: Readonly<Record<Need["action"], string>> = { hold: "hold or release", revoke: "revoke", join: "join or leave" };

function unauthorized(message: string): HttpResponseInit {
  return errorResponse("Unauthorized", message);
}

/** Compared with every key in constant time, so the time taken says nothing about which key or how much of it matched. */
function matchingKey(keys: readonly NamedKey[], given: string): NamedKey | undefined {
  const a = Buffer.from(given, "utf8");
  let found: NamedKey | undefined;
  for (const key of keys) {
    const b = Buffer.from(key.value, "utf8");
    if (a.length === b.length && timingSafeEqual(a, b)) found = key;
  }
  return found;
}

function callerIs(entry: string, caller: Caller): boolean {
  if (caller.kind === "unchecked") return false;
  if (entry === "*") return true;
  if (caller.kind === "key") return entry === `key:${caller.name}`;
  const id = entry.toLowerCase();
  return id === caller.objectId || id === caller.appId;
}

/** `*` is any run of characters; everything else is itself, case and all. */
function matches(pattern: string, name: string): boolean {
  if (!pattern.includes("*")) return pattern === name;
  const source = pattern.split("*").map((piece) => piece.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join(".*");
  return new RegExp(`^${source}$`, "s").test(name);
}

/** How a caller is named in grants: its object id (or app id), or key:<name>. */
export function callerName(caller: Caller): string {
  if (caller.kind === "key") return `key:${caller.name}`;
  if (caller.kind === "identity") return caller.objectId ?? caller.appId ?? "(an identity without oid or appid)";
  return "(unchecked)";
}

function describeCaller(caller: Caller): string {
  if (caller.kind === "key") return `The key "${caller.name}"`;
  if (caller.kind === "identity") return `The identity ${caller.objectId ?? "?"} (application ${caller.appId ?? "?"})`;
  return "This caller";
}
