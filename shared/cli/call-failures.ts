import { EXIT } from "./exit-codes.js";

/**
 * Failed calls that retrying cannot fix. The SDK keeps trying after any failure (a key
 * rotation or a deploy may fix it), but a person at a terminal wants to hear at once that
 * the key or the endpoint is wrong, with a hint, instead of the same error every second:
 * one-shot commands exit 1 on them; `elect` and `run`, which run under service managers
 * through key rotations and deploys, report them once and keep trying (reportUnfixable).
 *
 * Judged by the HTTP status alone, so that it holds for any error the SDK throws with one
 * (HaRequestError, or a subclass for these cases): no route of the contract answers 404,
 * so a 404 means the URL is wrong, whatever its body says.
 */
export function unfixableCallHint(error: unknown, endpoint: string): string | undefined {
  const status = error instanceof Error && "status" in error ? (error as { status?: unknown }).status : undefined;
  // With several endpoints, the one that answered (the SDK's errors name it) is the one to correct.
  const answered = error instanceof Error && "endpoint" in error ? (error as { endpoint?: unknown }).endpoint : undefined;
  if (typeof answered === "string") endpoint = answered;
  if (status === 401 && (error as { credential?: unknown }).credential === "token") {
    return (
      "The service refused this managed identity's token (the service's message above says why): most often it was asked for " +
      "another audience than the service accepts. Give --audience (or HA_AUTH_AUDIENCE) as the service's HA_AUTH_AUDIENCE has it " +
      "(its api://… URI or client id), and use an identity of the service's tenant (HA_AUTH_TENANT_ID) (docs/deploy.md, \"How workers authenticate\")."
    );
  }
  if (status === 401) {
    return (
      "The function key is wrong or missing: pass --key KEY or set HA_API_KEY. In Azure, list the app's keys with " +
      "`az functionapp keys list -g <group> -n <app>` (docs/deploy.md, \"Get a function key\"); " +
      "against `ha-module serve`, use the HA_API_KEY it was started with."
    );
  }
  if (status === 403) {
    return (
      "The service knows this caller but none of its grants (HA_GRANTS) lets it write this role or group: " +
      "use a role or group granted to this identity or key, or add a grant (docs/deploy.md, \"Grants\"). Retrying does not change a grant."
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

/**
 * What a command prints on such a failure: the error, then the hint. The SDK's advice for
 * a 401 names its own options (apiKey, ManagedIdentityCredential's audience); at the command
 * line they are --key and --audience.
 */
export function describeUnfixable(error: Error, hint: string): string {
  const message = error.message
    .replace("pass apiKey or set HA_API_KEY", "pass --key or set HA_API_KEY")
    .replace("as ManagedIdentityCredential's audience or HA_AUTH_AUDIENCE", "as --audience or HA_AUTH_AUDIENCE");
  return `${message}\n  ${hint}`;
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

/** How a long-running command ends on the first failed call that no retry can fix (untilUnfixable): its text said, exit 1. */
export function exitWhenUnfixable(unfixable: Promise<string>, say: (text: string) => void): Promise<number> {
  return unfixable.then((text) => {
    say(text);
    return EXIT.failure;
  });
}

/** Something that reports failed calls and answers that show who holds the role, like PrimaryElector. */
export interface AnsweringSource {
  on(event: "error", handler: (error: Error) => unknown): unknown;
  on(event: "primaryChanged" | "elected", handler: () => unknown): unknown;
}

/**
 * How `elect` and `run` report failed calls while they keep trying. Each failure a retry may
 * fix is printed. One that retrying cannot fix (401, 403, 404) is printed once with its hint, and
 * not again while the calls keep failing that way (the elector backs off meanwhile, up to T
 * between tries, and a lease held runs out: `run` stops its command as for any lost lease).
 * The report ends, said in one line, only with an answer that shows the refusal is over, and
 * the next such failure is printed again: an accepted write (`elected`) ends any; a read's
 * answer (`primaryChanged`) ends a 401 or 404, which refuse every call, but never a 403,
 * which refuses only the writes a grant does not allow: while the reads are answered and
 * another identity takes and releases the role, nothing has changed for this one.
 */
export class FailureReport {
  #refused: number | undefined;

  /** `stopping`: the command stops on a 401, 403 or 404 (--exit-on-auth-error, --timeout 0), so it says no more than what went wrong. */
  constructor(
    private readonly endpoint: string,
    private readonly note: (text: string) => void,
    private readonly stopping = false,
  ) {}

  /** Prints `error` as said above; true when retrying cannot fix it. */
  failed(error: Error): boolean {
    const hint = unfixableCallHint(error, this.endpoint);
    if (hint === undefined) {
      this.note(error.message);
      return false;
    }
    const status = (error as { status?: number }).status;
    if (this.stopping) {
      this.note(describeUnfixable(error, hint));
    } else if (this.#refused !== status) {
      this.#refused = status;
      this.note(
        `${describeUnfixable(error, hint)}\n  Trying again, less and less often (up to every T), until the answer changes; ` +
          "not primary meanwhile. --exit-on-auth-error exits 1 instead.",
      );
    }
    return true;
  }

  /** The service answered a read (`read`), or accepted a write (`write`). */
  answered(call: "read" | "write"): void {
    if (this.#refused === undefined || (call === "read" && this.#refused === 403)) return;
    this.note(
      call === "write"
        ? `the service answers again and accepted a write (it answered ${this.#refused} before); competing as before.`
        : `the service answers again (it answered ${this.#refused} before); competing as before.`,
    );
    this.#refused = undefined;
  }

  /** Reports the elector's failures and answers from now on. */
  watch(source: AnsweringSource): void {
    source.on("primaryChanged", () => this.answered("read"));
    source.on("elected", () => this.answered("write"));
    source.on("error", (error) => void this.failed(error));
  }
}
