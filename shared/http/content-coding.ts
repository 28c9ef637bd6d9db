import { MAX_BODY_BYTES } from "../contract/input-rules.js";
import { HttpError } from "./http-error.js";

/** Reads one request header by its lower-case name; undefined when it is absent. */
export type HeaderReader = (name: string) => string | undefined;

/** Whether the headers announce a body: a positive Content-Length, or any Transfer-Encoding. */
export function announcesBody(header: HeaderReader): boolean {
  return Number(header("content-length") ?? "0") > 0 || header("transfer-encoding") !== undefined;
}

/**
 * 415 for a body the service would misread, or undefined. Bodies are parsed as they
 * arrive, so a gzip body labelled gzip would be parsed as if plain: only `identity` content
 * and `chunked` transfer are accepted. A request without a body is not refused for the
 * label alone: there is nothing to decode. Both hosts answer through this one check.
 */
export function codingRefusal(header: HeaderReader, hasBody: boolean, limitBytes = MAX_BODY_BYTES): HttpError | undefined {
  if (!hasBody) return undefined;
  const content = codings(header("content-encoding")).find((coding) => coding !== "identity");
  const transfer = codings(header("transfer-encoding")).find((coding) => coding !== "chunked");
  const named = content !== undefined ? `Content-Encoding ${JSON.stringify(content)}` : transfer !== undefined ? `Transfer-Encoding ${JSON.stringify(transfer)}` : undefined;
  if (named === undefined) return undefined;
  return new HttpError(
    "UnsupportedMediaType",
    `${named} is not supported: send the JSON body as it is, uncompressed (it is at most ${limitBytes} bytes).`,
  );
}

function codings(header: string | undefined): string[] {
  if (header === undefined) return [];
  return header
    .split(",")
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== "");
}
