import { recordResponse } from "./openapi-responses.js";

export interface Reply {
  status: number;
  body: Record<string, unknown>;
  headers: Headers;
}

/**
 * One HTTP request to a running service, as the end-to-end suites send them. Every answer
 * is recorded (openapi-responses.ts) so that the suite can check it against the OpenAPI
 * document the service serves.
 */
export async function call(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply> {
  const init: RequestInit = { method, headers: { ...headers } };
  if (body !== undefined) {
    init.body = typeof body === "string" ? body : JSON.stringify(body);
    (init.headers as Record<string, string>)["content-type"] = "application/json";
  }
  const response = await fetch(`${base}${path}`, init);
  const text = await response.text();
  const contentType = response.headers.get("content-type");
  const parsed: unknown = text === "" ? {} : contentType?.includes("json") ? JSON.parse(text) : text;
  recordResponse({ origin: new URL(base).origin, method, path: `${new URL(base).pathname}${path}`, status: response.status, contentType, body: parsed });
  return { status: response.status, body: (typeof parsed === "object" ? parsed : {}) as Record<string, unknown>, headers: response.headers };
}

export const primaryOf = (reply: Reply): Record<string, unknown> | null => reply.body["primary"] as Record<string, unknown> | null;
export const errorCodeOf = (reply: Reply): unknown => (reply.body["error"] as { code?: unknown } | undefined)?.code;
