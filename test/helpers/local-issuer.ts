import { createHmac, generateKeyPairSync, sign, type KeyObject } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** The tenant the tests' tokens are issued by. */
export const TEST_TENANT = "0b6c4a5e-1f2d-4c3b-9a8e-7d6f5e4c3b2a";
export const OTHER_TENANT = "9f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a";
export const TEST_AUDIENCE = "api://ha-module-test";

/** Two workers' managed identities: object id and application (client) id each. */
export const HEAD_A = { oid: "aaaaaaaa-0000-4000-8000-00000000000a", appid: "aaaaaaaa-1111-4000-8000-00000000000a" };
export const HEAD_B = { oid: "bbbbbbbb-0000-4000-8000-00000000000b", appid: "bbbbbbbb-1111-4000-8000-00000000000b" };

export interface TokenOptions {
  readonly claims?: Record<string, unknown>;
  /** Drop these claims. */
  readonly without?: readonly string[];
  readonly header?: Record<string, unknown>;
  /** Sign with this key instead of the current one (a key the issuer does not publish). */
  readonly key?: { kid: string; privateKey: KeyObject };
  /** HS256 with this secret instead of RS256. */
  readonly hmacSecret?: string | Buffer;
  /** No signature at all (alg none). */
  readonly unsigned?: boolean;
}

/**
 * A Microsoft Entra stand-in on 127.0.0.1: the tenant's OpenID metadata and key set, as
 * https://login.microsoftonline.com/{tenant}/v2.0/.well-known/openid-configuration and its
 * jwks_uri serve them, and access tokens signed with its keys. No network; keys made here.
 */
export class LocalIssuer {
  jwksFetches = 0;
  metadataFetches = 0;
  /** While set, the key set answers 503. */
  down = false;
  readonly #published: Array<{ kid: string; privateKey: KeyObject; publicKey: KeyObject }> = [];
  #current: { kid: string; privateKey: KeyObject };

  private constructor(
    private readonly server: Server,
    readonly authority: string,
  ) {
    this.#current = this.publish();
  }

  static async start(): Promise<LocalIssuer> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const issuer = new LocalIssuer(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    server.on("request", (request, response) => {
      const url = request.url ?? "";
      const send = (status: number, body: unknown): void => {
        response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
      };
      if (url === `/${TEST_TENANT}/v2.0/.well-known/openid-configuration`) {
        issuer.metadataFetches += 1;
        return send(200, { issuer: issuer.issuer, jwks_uri: `${issuer.authority}/${TEST_TENANT}/discovery/v2.0/keys` });
      }
      if (url === `/${TEST_TENANT}/discovery/v2.0/keys`) {
        issuer.jwksFetches += 1;
        if (issuer.down) return send(503, { error: "down" });
        return send(200, { keys: issuer.#published.map(({ kid, publicKey }) => ({ ...publicKey.export({ format: "jwk" }), kid, use: "sig", alg: "RS256" })) });
      }
      send(404, { error: "not found" });
    });
    return issuer;
  }

  /** The v2.0 issuer of the tenant, as tokens name it. */
  get issuer(): string {
    return `${this.authority}/${TEST_TENANT}/v2.0`;
  }

  /** A new signing key in the published set; the issuer signs with it from now on. */
  rotate(): string {
    this.#current = this.publish();
    return this.#current.kid;
  }

  /** A key pair nobody publishes. */
  static strayKey(kid = "stray"): { kid: string; privateKey: KeyObject } {
    return { kid, privateKey: generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey };
  }

  /** A v2.0 access token for `who` (a managed identity), valid for an hour from now. */
  token(who: { oid: string; appid: string }, options: TokenOptions = {}): string {
    const now = Math.floor(Date.now() / 1000);
    const claims: Record<string, unknown> = {
      aud: TEST_AUDIENCE,
      iss: this.issuer,
      iat: now,
      nbf: now,
      exp: now + 3600,
      oid: who.oid,
      azp: who.appid,
      sub: who.oid,
      tid: TEST_TENANT,
      ver: "2.0",
      ...options.claims,
    };
    for (const name of options.without ?? []) delete claims[name];
    const key = options.key ?? this.#current;
    const alg = options.unsigned === true ? "none" : options.hmacSecret !== undefined ? "HS256" : "RS256";
    const header = { typ: "JWT", alg, kid: key.kid, ...options.header };
    const signingInput = `${part(header)}.${part(claims)}`;
    if (options.unsigned === true) return `${signingInput}.`;
    const signature =
      options.hmacSecret !== undefined
        ? createHmac("sha256", options.hmacSecret).update(signingInput).digest()
        : sign("RSA-SHA256", Buffer.from(signingInput), key.privateKey);
    return `${signingInput}.${signature.toString("base64url")}`;
  }

  /** The current public key as PEM: what an HS256 forgery would use as its secret. */
  publicPem(): string {
    return (this.#published.at(-1)?.publicKey.export({ format: "pem", type: "spki" }) as string | undefined) ?? "";
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  private publish(): { kid: string; privateKey: KeyObject } {
    const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const kid = `key-${this.#published.length + 1}`;
    this.#published.push({ kid, privateKey, publicKey });
    return { kid, privateKey };
  }
}

function part(value: unknown): string {
  return Buffer.from(JSON.stringify(value), "utf8").toString("base64url");
}
