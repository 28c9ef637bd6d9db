/** The request target as the host routes it: always on the host's own origin. */
export type RequestTarget = { readonly ok: true; readonly url: URL } | { readonly ok: false; readonly message: string };

/** The fixed origin paths are parsed against; never the caller's Host header or authority. */
const LOCAL_ORIGIN = "http://127.0.0.1";
const ABSOLUTE_FORM = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//;

/**
 * Reads the request target the way a server must (RFC 9112 §3.2), never throwing:
 *
 * - origin-form (`/api/…?…`) is the path itself, so `//x` is a path with an empty
 *   first segment (404), not a host called `x`;
 * - absolute-form (`http://host/api/…`) must be accepted by a server, as Kestrel in
 *   front of Azure Functions accepts it; only its path and query are used;
 * - userinfo in it (`http://user:pw@host/…`) is refused, as RFC 9110 §4.2.4 asks;
 * - anything else (`*`, `host:443`, an unparsable URL) is a bad request, as in Kestrel.
 */
export function parseRequestTarget(target: string): RequestTarget {
  if (target.startsWith("/")) return onLocalOrigin(target, target);
  if (ABSOLUTE_FORM.test(target)) {
    const url = parse(target);
    if (url === undefined || (url.protocol !== "http:" && url.protocol !== "https:")) {
      return refuse(target, "an absolute URL must be a valid http or https URL");
    }
    if (url.username !== "" || url.password !== "") {
      return refuse(target, "an absolute URL must not carry user:password@ credentials; send the API key in x-functions-key");
    }
    return onLocalOrigin(`${url.pathname}${url.search}`, target);
  }
  return refuse(target, "it must be a path under /api, such as /api/primary/scheduler");
}

/** Concatenated, not resolved: resolving "//x" against a base would make x the host. */
function onLocalOrigin(pathAndQuery: string, target: string): RequestTarget {
  const url = parse(`${LOCAL_ORIGIN}${pathAndQuery}`);
  return url === undefined ? refuse(target, "it is not a valid path") : { ok: true, url };
}

function parse(value: string): URL | undefined {
  try {
    return new URL(value);
  } catch {
    return undefined;
  }
}

function refuse(target: string, why: string): RequestTarget {
  const shown = target.length > 80 ? `${target.slice(0, 80)}…` : target;
  return { ok: false, message: `The request target ${JSON.stringify(shown)} is not valid: ${why}.` };
}
