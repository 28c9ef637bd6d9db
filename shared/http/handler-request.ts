/**
 * What a route handler and handleRoute may read of a request: the part of the Functions
 * HttpRequest they use. Azure passes its HttpRequest, which has all of it; the local host
 * passes a LocalRequest (shared/host/local-request.ts) built from node:http without the
 * Fetch Request underneath, which cost more per heartbeat than the rest of our layer.
 * Keeping the handlers to this interface is what lets both hosts share one route table.
 */
export interface HandlerRequest {
  /** Upper case, as both hosts give it. */
  readonly method: string;
  /** The absolute URL, query included. */
  readonly url: string;
  /** Case-insensitive; null when absent; repeated headers joined with ", ". */
  readonly headers: { get(name: string): string | null };
  readonly query: URLSearchParams;
  readonly params: Readonly<Record<string, string>>;
  /** Null when the request has no body (and always for GET and HEAD, as the Fetch Request has it). */
  readonly body: object | null;
  arrayBuffer(): Promise<ArrayBuffer>;
}

/** Where handleRoute logs: the invocation's log (Application Insights in Azure), the console on the local host. */
export interface HandlerContext {
  warn(...args: unknown[]): void;
  error(...args: unknown[]): void;
}
