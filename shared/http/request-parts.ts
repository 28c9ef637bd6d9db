import type { HandlerRequest } from "./handler-request.js";
import { MAX_BODY_BYTES } from "../contract/input-rules.js";
import { HttpError } from "./http-error.js";

/** The body's bytes; over `limitBytes` (MAX_BODY_BYTES unless the route says otherwise) by its Content-Length is 413 before anything is read. */
export async function readBody(request: HandlerRequest, limitBytes = MAX_BODY_BYTES): Promise<Uint8Array> {
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > limitBytes) {
    throw new HttpError("PayloadTooLarge", `The request body is ${declared} bytes; the limit is ${limitBytes}.`);
  }
  return new Uint8Array(await request.arrayBuffer());
}

/** A query parameter the operation does not take is a 400; `code` (the Functions key) is always allowed. */
export function rejectUnknownQuery(request: HandlerRequest, allowed: readonly string[]): void {
  for (const key of request.query.keys()) {
    if (key !== "code" && !allowed.includes(key)) {
      throw new HttpError("InvalidRequest", `Unknown query parameter "${key}".`);
    }
  }
}
