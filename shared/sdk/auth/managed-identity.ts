import { readFile } from "node:fs/promises";

/**
 * Where HaClient gets the bearer token it sends in `Authorization` (docs/deploy.md#how-workers-authenticate).
 * `description` names the identity, for start lines.
 */
export interface BearerTokenProvider {
  /** A token for the service, fetched or cached; rejects when none can be had before `abortSignal`. */
  getToken(options?: { abortSignal?: AbortSignal }): Promise<string>;
  /** Names the identity, e.g. "managed identity (system-assigned) (instance metadata service) for api://ha-module". */
  readonly description: string;
}

/** What a ManagedIdentityCredential takes: the service's audience, and which identity. */
export interface ManagedIdentityOptions {
  /** The service's audience: the application id URI (api://…) or client id its HA_AUTH_AUDIENCE accepts. */
  readonly audience: string;
  /** A user-assigned identity's client id; absent: the system-assigned identity (or AZURE_CLIENT_ID under AKS workload identity). */
  readonly clientId?: string;
  /** Where to look for the platform's identity endpoints; process.env by default. */
  readonly env?: NodeJS.ProcessEnv;
  /** The VM's instance metadata service; http://169.254.169.254 by default (tests give a local one). */
  readonly imdsEndpoint?: string;
  /** The budget of one token request; 10 s by default. */
  readonly timeoutInMs?: number;
  /** Wall-clock now in ms, for the token's expiry; Date.now by default. */
  readonly now?: () => number;
}

/** A token is fetched again this long before it expires, or at half its life if that is later (a short-lived token). */
const REFRESH_BEFORE_MS = 5 * 60_000;
const DEFAULT_IMDS = "http://169.254.169.254";
const DEFAULT_AUTHORITY_HOST = "https://login.microsoftonline.com";

/**
 * A managed identity's access tokens for the service, from whichever source the platform
 * offers, with fetch alone (no Azure package to install):
 *
 *  - AKS workload identity: AZURE_FEDERATED_TOKEN_FILE, AZURE_CLIENT_ID, AZURE_TENANT_ID
 *    (and AZURE_AUTHORITY_HOST): the pod's federated token exchanged at Microsoft Entra;
 *  - App Service, Functions, Container Apps: IDENTITY_ENDPOINT and IDENTITY_HEADER;
 *  - an Azure VM or scale set: the instance metadata service (IMDS).
 *
 * The token is kept until REFRESH_BEFORE_MS before it expires; concurrent calls share one fetch.
 */
export class ManagedIdentityCredential implements BearerTokenProvider {
  /** Names the identity and the source its tokens come from, for start lines and errors. */
  readonly description: string;
  readonly #request: (signal: AbortSignal) => Promise<unknown>;
  readonly #timeoutMs: number;
  readonly #now: () => number;
  #token: { value: string; refreshAt: number } | undefined;
  #pending: Promise<string> | undefined;

  constructor(options: ManagedIdentityOptions) {
    if (typeof options?.audience !== "string" || options.audience.trim() === "") {
      throw new TypeError("Expected `audience` (the service's application id URI such as api://ha-module, or its client id: what its HA_AUTH_AUDIENCE accepts), e.g. from HA_AUTH_AUDIENCE.");
    }
    if (options.clientId !== undefined && (typeof options.clientId !== "string" || options.clientId.trim() === "")) {
      throw new TypeError("Expected `clientId` to be a user-assigned identity's client id (a GUID), or absent for the system-assigned identity.");
    }
    const env = options.env ?? process.env;
    const audience = options.audience.trim();
    this.#timeoutMs = Math.max(1, Math.round(options.timeoutInMs ?? 10_000));
    this.#now = options.now ?? Date.now;
    const federatedTokenFile = nonEmpty(env["AZURE_FEDERATED_TOKEN_FILE"]);
    const identityEndpoint = nonEmpty(env["IDENTITY_ENDPOINT"]);
    const identityHeader = nonEmpty(env["IDENTITY_HEADER"]);
    if (federatedTokenFile !== undefined) {
      const clientId = options.clientId ?? nonEmpty(env["AZURE_CLIENT_ID"]);
      const tenantId = nonEmpty(env["AZURE_TENANT_ID"]);
      if (clientId === undefined || tenantId === undefined) {
        throw new TypeError("AKS workload identity needs AZURE_CLIENT_ID and AZURE_TENANT_ID beside AZURE_FEDERATED_TOKEN_FILE: label the pod azure.workload.identity/use=true and its service account with the identity's client id.");
      }
      const authority = (nonEmpty(env["AZURE_AUTHORITY_HOST"]) ?? DEFAULT_AUTHORITY_HOST).replace(/\/+$/, "");
      this.description = `managed identity ${clientId} (AKS workload identity) for ${audience}`;
      this.#request = async (signal) => {
        const assertion = (await readFile(federatedTokenFile, "utf8")).trim();
        const body = new URLSearchParams({
          grant_type: "client_credentials",
          client_id: clientId,
          client_assertion_type: "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
          client_assertion: assertion,
          scope: `${audience.replace(/\/+$/, "")}/.default`,
        });
        return fetchJson(`${authority}/${tenantId}/oauth2/v2.0/token`, { method: "POST", body, signal, headers: { "content-type": "application/x-www-form-urlencoded" } });
      };
    } else if (identityEndpoint !== undefined && identityHeader !== undefined) {
      this.description = `managed identity ${options.clientId ?? "(system-assigned)"} (App Service identity endpoint) for ${audience}`;
      this.#request = (signal) => {
        const url = new URL(identityEndpoint);
        url.searchParams.set("resource", audience);
        url.searchParams.set("api-version", "2019-08-01");
        if (options.clientId !== undefined) url.searchParams.set("client_id", options.clientId);
        return fetchJson(url.toString(), { signal, headers: { "x-identity-header": identityHeader } });
      };
    } else {
      const imds = (options.imdsEndpoint ?? DEFAULT_IMDS).replace(/\/+$/, "");
      this.description = `managed identity ${options.clientId ?? "(system-assigned)"} (instance metadata service) for ${audience}`;
      this.#request = (signal) => {
        const url = new URL(`${imds}/metadata/identity/oauth2/token`);
        url.searchParams.set("api-version", "2018-02-01");
        url.searchParams.set("resource", audience);
        if (options.clientId !== undefined) url.searchParams.set("client_id", options.clientId);
        return fetchJson(url.toString(), { signal, headers: { metadata: "true" } });
      };
    }
  }

  /** A token for the service: the cached one until shortly before it expires, else fetched (concurrent calls share one fetch). */
  getToken(options: { abortSignal?: AbortSignal } = {}): Promise<string> {
    const now = this.#now();
    if (this.#token !== undefined && now < this.#token.refreshAt) return Promise.resolve(this.#token.value);
    this.#pending ??= this.#fetchToken(now).finally(() => (this.#pending = undefined));
    const caller = options.abortSignal;
    if (caller === undefined) return this.#pending;
    caller.throwIfAborted();
    return Promise.race([this.#pending, new Promise<never>((_, reject) => caller.addEventListener("abort", () => reject(caller.reason), { once: true }))]);
  }

  async #fetchToken(now: number): Promise<string> {
    let answer: unknown;
    try {
      answer = await this.#request(AbortSignal.timeout(this.#timeoutMs));
    } catch (error) {
      throw new Error(`Could not get a token for the ${this.description}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
    const record = (typeof answer === "object" && answer !== null ? answer : {}) as Record<string, unknown>;
    const value = record["access_token"];
    if (typeof value !== "string" || value === "") throw new Error(`The ${this.description} answered without an access_token.`);
    const expiresAt = expiryOf(record, now);
    const lifetime = expiresAt - now;
    this.#token = { value, refreshAt: now + Math.max(0, lifetime - REFRESH_BEFORE_MS, lifetime / 2) };
    return value;
  }
}

/** expires_on (epoch seconds, as App Service and IMDS send it) or expires_in (seconds); an hour if neither. */
function expiryOf(record: Record<string, unknown>, now: number): number {
  const on = Number(record["expires_on"]);
  if (Number.isFinite(on) && on > 0) return on * 1000;
  const inSeconds = Number(record["expires_in"]);
  return now + (Number.isFinite(inSeconds) && inSeconds > 0 ? inSeconds : 3600) * 1000;
}

async function fetchJson(url: string, init: RequestInit): Promise<unknown> {
  const response = await fetch(url, init);
  const text = await response.text();
  if (!response.ok) throw new Error(`${response.status} from ${new URL(url).origin}${new URL(url).pathname}: ${text.slice(0, 300)}`);
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`not JSON from ${new URL(url).origin}`);
  }
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed === undefined || trimmed === "" ? undefined : trimmed;
}
