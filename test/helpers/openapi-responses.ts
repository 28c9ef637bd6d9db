import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

/** One answer the tests received, as it came off the wire. */
export interface ReceivedResponse {
  readonly method: string;
  /** The path as sent, below the host: "/api/primary/scheduler" (a query is ignored). */
  readonly path: string;
  readonly status: number;
  readonly contentType: string | null;
  /** The parsed JSON body, or the text of a non-JSON one. */
  readonly body: unknown;
}

type Document = { paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, unknown> }> }>> };

/**
 * Checks answers against the OpenAPI document with Ajv 2020 and ajv-formats (so a bad
 * date-time fails, which openapi-response-validator misses): the path template that
 * matches, the operation of the method, the response of the status, the schema of its
 * content type. Returns what is wrong, or [] when the answer is what the document says.
 */
export class ResponseChecker {
  readonly #ajv: Ajv2020;
  readonly #templates: Array<{ template: string; pattern: RegExp }>;
  readonly #compiled = new Map<string, ValidateFunction>();

  constructor(private readonly document: Document) {
    this.#ajv = new Ajv2020({ strict: false, allErrors: true });
    (addFormats as unknown as (ajv: Ajv2020) => void)(this.#ajv);
    this.#ajv.addSchema(document as object, "openapi");
    this.#templates = Object.keys(document.paths).map((template) => ({
      template,
      pattern: new RegExp(`^${template.replace(/[.]/g, "\\.").replace(/\{[A-Za-z]+\}/g, "[^/]+")}/?$`),
    }));
  }

  problems(response: ReceivedResponse): string[] {
    const where = `${response.method} ${response.path} → ${response.status}`;
    const pathname = response.path.split("?")[0] ?? "";
    // The most specific template first: a literal segment beats a parameter.
    const matches = this.#templates.filter(({ pattern }) => pattern.test(pathname));
    const found = matches.sort((a, b) => literalLength(b.template) - literalLength(a.template))[0];
    const method = response.method.toLowerCase();
    const operation = found === undefined ? undefined : this.document.paths[found.template]?.[method];
    // No route (404) or no such method on a route (405, with Allow): the document's Error.
    if (found === undefined || operation === undefined) {
      const status = found === undefined ? 404 : 405;
      if (response.status !== status) return [`${where}: ${found === undefined ? "no path of the document matches" : `${found.template} has no ${method} operation`}`];
      return this.#check(where, "components/schemas/Error", response.body);
    }
    const answer = operation.responses[String(response.status)];
    if (answer === undefined) return [`${where}: ${found.template} ${method} documents no ${response.status}`];
    const mediaType = (response.contentType ?? "").split(";")[0]?.trim() ?? "";
    if (answer.content === undefined) return [];
    if (!(mediaType in answer.content)) return [`${where}: content type ${mediaType} is not one of ${Object.keys(answer.content).join(", ")}`];
    const pointer = ["paths", found.template, method, "responses", String(response.status), "content", mediaType, "schema"].map(escape).join("/");
    return this.#check(where, pointer, response.body);
  }

  #check(where: string, pointer: string, body: unknown): string[] {
    let validate = this.#compiled.get(pointer);
    if (validate === undefined) {
      validate = this.#ajv.compile({ $ref: `openapi#/${pointer}` });
      this.#compiled.set(pointer, validate);
    }
    if (validate(body)) return [];
    return (validate.errors ?? []).map((error) => `${where}: ${error.instancePath || "(body)"} ${error.message ?? ""} ${JSON.stringify(error.params)}`);
  }
}

function literalLength(template: string): number {
  return template.replace(/\{[A-Za-z]+\}/g, "").length;
}

function escape(token: string): string {
  return encodeURIComponent(token.replace(/~/g, "~0").replace(/\//g, "~1")).replace(/%7B/g, "{").replace(/%7D/g, "}");
}

/**
 * What the end-to-end helpers record: every answer they receive, to be checked against
 * the served document once a suite is done (checkRecordedResponses in its afterAll).
 */
export const receivedResponses: RecordedResponse[] = [];

/** An answer as recorded, with the service that gave it (e.g. http://127.0.0.1:41631): each suite checks its own service's answers. */
export interface RecordedResponse extends ReceivedResponse {
  readonly origin: string;
}

export function recordResponse(response: RecordedResponse): void {
  receivedResponses.push(response);
}

/**
 * Fetches the document the service at `api` serves and checks every answer recorded from
 * that service (those of other services, a suite running beside this one, stay for their
 * own check); returns the problems.
 */
export async function checkRecordedResponses(api: string, headers: Record<string, string> = {}): Promise<{ checked: number; problems: string[] }> {
  const served = (await (await fetch(`${api}/openapi.json`, { headers })).json()) as Document;
  const checker = new ResponseChecker(served);
  const origin = new URL(api).origin;
  const taken = receivedResponses.filter((response) => response.origin === origin);
  receivedResponses.splice(0, receivedResponses.length, ...receivedResponses.filter((response) => response.origin !== origin));
  return { checked: taken.length, problems: taken.flatMap((response) => checker.problems(response)) };
}
