/**
 * Failed calls that retrying cannot fix. The SDK keeps trying after any failure (a key
 * rotation or a deploy may fix it), but a person at a terminal or a supervisor wants to
 * hear at once that the key or the endpoint is wrong, so the CLI stops on them with a
 * hint (exit 1) instead of printing the same error every second.
 *
 * Judged by the HTTP status alone, so that it holds for any error the SDK throws with one
 * (HaRequestError, or a subclass for these cases): no route of the contract answers 404,
 * so a 404 means the URL is wrong, whatever its body says.
 */
export function unfixableCallHint(error: unknown, endpoint: string): string | undefined {
  const status = error instanceof Error && "status" in error ? (error as { status?: unknown }).status : undefined;
  if (status === 401) {
    return (
      "The function key is wrong or missing: pass --key KEY or set HA_API_KEY. In Azure, list the app's keys with " +
      "`az functionapp keys list -g <group> -n <app>` (docs/deploy.md, \"Get a function key\"); " +
      "against `ha-module serve`, use the HA_API_KEY it was started with."
    );
  }
  if (status === 404) {
    const hint = endpoint.replace(/\/+$/, "").endsWith("/api")
      ? "Is this the ha-module service? Its routes are <endpoint>/primary/… and <endpoint>/health."
      : `Does your endpoint end in /api? It is ${endpoint}; the service's routes are under /api, e.g. ${suggestApi(endpoint)}.`;
    return `${hint} In Azure every route also answers 404 while the app has no functions, e.g. before a deploy has finished (docs/deploy.md, "When it does not start").`;
  }
  return undefined;
}

function suggestApi(endpoint: string): string {
  try {
    const url = new URL(endpoint);
    return `${url.origin}/api`;
  } catch {
    return "https://<app>.azurewebsites.net/api";
  }
}

/** What a command prints when it stops on such a failure: the error, then the hint. */
export function describeUnfixable(error: Error, hint: string): string {
  return `${error.message}\n  ${hint}`;
}

/** Something that reports failed calls through an `error` event, like PrimaryElector. */
export interface ErrorSource {
  on(event: "error", handler: (error: Error) => unknown): unknown;
}

/**
 * Prints each failure that a retry may fix on stderr (`note`), and resolves with the text
 * to print (error and hint) on the first one that it cannot fix.
 */
export function untilUnfixable(source: ErrorSource, endpoint: string, note: (text: string) => void): Promise<string> {
  return new Promise((resolve) => {
    let done = false;
    source.on("error", (error) => {
      if (done) return;
      const hint = unfixableCallHint(error, endpoint);
      if (hint === undefined) {
        note(error.message);
        return;
      }
      done = true;
      resolve(describeUnfixable(error, hint));
    });
  });
}
