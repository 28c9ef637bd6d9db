import { codesWithStatus, ERROR_STATUS, errorBodySchema, type ErrorCode } from "../contract/error-codes.js";
import { ID_SCHEMA, ref, type JsonSchema } from "../contract/json-schema.js";
import type { ErrorDoc, OperationDoc, ParameterDoc } from "../contract/operation-doc.js";
import { SCHEMAS } from "../contract/schemas.js";
import type { Operation } from "./route.js";

/**
 * The statuses every operation can answer, whatever it does: a bad query (400), no key
 * (401; under the Functions host with no body), the local host's refusals of a slow,
 * oversized, encoded or header-heavy request (408, 413, 415, 431), a bug (500), and the
 * store or the service unavailable (503, with Retry-After when shedding).
 */
export const COMMON_ERROR_STATUSES = [400, 401, 408, 413, 415, 431, 500, 503] as const;

/** The path parameters named alike everywhere. */
const ID_PARAMETERS: Readonly<Record<string, string>> = {
  utype: "The role (a utype).",
  group: "The membership group.",
  member: "The member's stable name in its group.",
};

/**
 * The OpenAPI 3.1 document of the route table: every operation's `doc`, the contract's
 * JSON Schemas as components, the error bodies per status. Built from the table at run
 * time, so what is served and what is described cannot drift apart.
 */
export function buildOpenApi(operations: readonly Operation[], version: string): JsonSchema {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const operation of operations) {
    const path = `/api/${operation.route}`;
    paths[path] ??= {};
    paths[path][operation.method.toLowerCase()] = operationObject(operation);
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "ha-module",
      version,
      summary: "Lease-based leader election and membership for Azure serverless.",
      description:
        "Errors are `{\"error\": {\"code\", \"message\"}}`, with the view beside it where a refusal shows one. A method a path does not serve is 405 with `Allow`; a path that is no route is 404. See docs/api.md and docs/protocol.md.",
      license: { name: "MIT", identifier: "MIT" },
    },
    jsonSchemaDialect: "https://json-schema.org/draft/2020-12/schema",
    tags: [
      { name: "leases", description: "Leader election: one primary per role (docs/api.md)." },
      { name: "membership", description: "Who is in a group, and who has failed (docs/membership.md)." },
      { name: "operations", description: "Health and the service's own description." },
    ],
    security: [{ functionKey: [] }, { functionKeyQuery: [] }, { entraToken: [] }],
    paths,
    components: {
      schemas: SCHEMAS,
      securitySchemes: {
        functionKey: {
          type: "apiKey",
          in: "header",
          name: "x-functions-key",
          description: "The function (or host) key; or, where the app checks callers itself, one of its named keys (HA_API_KEYS; the local host's HA_API_KEY).",
        },
        functionKeyQuery: { type: "apiKey", in: "query", name: "code", description: "The same key as a query parameter, for a browser navigation." },
        entraToken: {
          type: "http",
          scheme: "bearer",
          bearerFormat: "JWT",
          description:
            "A Microsoft Entra access token of the tenant HA_AUTH_TENANT_ID for the audience HA_AUTH_AUDIENCE, e.g. a managed identity's (docs/deploy.md#how-workers-authenticate).",
        },
      },
      headers: {
        RetryAfter: { description: "Seconds to wait before retrying.", schema: { type: "integer", minimum: 0 } },
        Allow: { description: "The methods the path serves.", schema: { type: "string" } },
      },
    },
  };
}

function operationObject({ name, route, method, doc }: Operation): JsonSchema {
  const parameters = [...pathParameters(route, doc), ...Object.entries(doc.query ?? {}).map(([key, param]) => parameter(key, "query", param))];
  return {
    operationId: name,
    tags: [doc.tag],
    summary: doc.summary,
    ...(doc.description === undefined ? {} : { description: doc.description }),
    ...(parameters.length === 0 ? {} : { parameters }),
    ...(doc.body === undefined ? {} : { requestBody: { required: doc.bodyRequired ?? true, content: { "application/json": { schema: closed(ref(doc.body)) } } } }),
    // Every write may be outside the caller's grants (HA_GRANTS): 403 Forbidden, nothing written
    // (a participant heartbeat's refused parts are 403 in their entries, never the request).
    // Every write a browser sends from another origin is 403 CrossOrigin (cross-origin.ts).
    responses: {
      [String("json" in doc.ok ? (doc.ok.status ?? 200) : 200)]: success(doc),
      ...errorResponses([
        ...(doc.errors ?? []),
        ...(method === "GET" ? [] : [{ code: "CrossOrigin" as const }]),
        ...(method === "GET" || doc.forbidden === false ? [] : [{ code: "Forbidden" as const }]),
      ]),
    },
  };
}

function pathParameters(route: string, doc: OperationDoc): JsonSchema[] {
  return [...route.matchAll(/\{([A-Za-z]+)\}/g)].map(([, key = ""]) => {
    const own = doc.path?.[key];
    const id = ID_PARAMETERS[key];
    if (own !== undefined) return parameter(key, "path", { ...own, required: true });
    if (id !== undefined) return parameter(key, "path", { description: id, schema: ID_SCHEMA, required: true });
    throw new Error(`/api/${route} has a path parameter {${key}} its doc does not describe.`);
  });
}

function parameter(name: string, location: "path" | "query", { description, schema, required }: ParameterDoc): JsonSchema {
  return { name, in: location, required: required ?? false, description, schema: schema ?? { type: "string" } };
}

function success(doc: OperationDoc): JsonSchema {
  const ok = doc.ok;
  if ("json" in ok) {
    const adds = ok.adds ?? {};
    const schema =
      Object.keys(adds).length === 0
        ? closed(ref(ok.json))
        : { allOf: [ref(ok.json), { type: "object", properties: adds, required: Object.keys(adds) }], unevaluatedProperties: false };
    return { description: ok.description, content: { "application/json": { schema } } };
  }
  const types: readonly string[] = typeof ok.contentType === "string" ? [ok.contentType] : ok.contentType;
  return { description: ok.description, content: Object.fromEntries(types.map((type) => [type, { schema: ok.schema ?? { type: "string" } }])) };
}

/**
 * One response per status: the operation's own refusals and the common ones. Codes that
 * carry a view beside `error` and codes that do not are branches of a oneOf, each closed,
 * so a 503 Overloaded without the health fields and a 503 StoreUnavailable with them both
 * validate, and nothing else does.
 */
function errorResponses(own: readonly ErrorDoc[]): Record<string, JsonSchema> {
  const byStatus = new Map<number, Map<string | undefined, Set<ErrorCode>>>();
  const add = (code: ErrorCode, view: string | undefined): void => {
    const status = ERROR_STATUS[code];
    const branches = byStatus.get(status) ?? new Map<string | undefined, Set<ErrorCode>>();
    byStatus.set(status, branches);
    const codes = branches.get(view) ?? new Set<ErrorCode>();
    branches.set(view, codes);
    codes.add(code);
  };
  for (const { code, with: view } of own) add(code, view);
  // A common code stays a plain branch even when the operation also sends it with a view:
  // health's own 503 shows the store, but the dispatcher's 503 for the same code does not.
  for (const status of COMMON_ERROR_STATUSES) {
    for (const code of codesWithStatus(status)) add(code, undefined);
  }
  const responses: Record<string, JsonSchema> = {};
  for (const [status, branches] of [...byStatus].sort(([a], [b]) => a - b)) {
    const schemas = [...branches].map(([view, codes]) => ({
      allOf: [
        errorBodySchema([...codes]),
        ...(view === undefined ? [] : [ref(view)]),
        ...(codes.has("Forbidden") ? [MISSING_GRANT] : []),
        ...(codes.has("NoSuchStandby") ? [LAST_SEEN] : []),
      ],
      unevaluatedProperties: false,
    }));
    const codes = new Set([...branches.values()].flatMap((set) => [...set]));
    responses[String(status)] = {
      description: [...codes].join(", "),
      ...(status === 503 ? { headers: { "Retry-After": { $ref: "#/components/headers/RetryAfter" } } } : {}),
      content: { "application/json": { schema: schemas.length === 1 ? schemas[0] : { oneOf: schemas } } },
    };
  }
  return responses;
}

/** Beside a 403's error: the grant that is missing, e.g. {"hold": "scheduler", "caller": "key:head-a"}. */
const MISSING_GRANT: JsonSchema = {
  type: "object",
  properties: {
    missing: {
      type: "object",
      description: "The grant the caller lacks: hold, revoke or join with the role or group, and the caller as grants name it.",
      additionalProperties: { type: "string" },
    },
  },
};

/** Beside a handover's NoSuchStandby: the standby `to` names, when it was seen but not lately enough. */
const LAST_SEEN: JsonSchema = {
  type: "object",
  properties: { lastSeen: { ...ref("StandbyView"), description: "The standby `to` names, with when it was last seen, when that was too long ago to hand over to it." } },
};

/** A named schema that admits no other property where it is used alone. */
function closed(schema: JsonSchema): JsonSchema {
  return { ...schema, unevaluatedProperties: false };
}
