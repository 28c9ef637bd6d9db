import type { LeaseStore } from "../lease/lease-store.js";
import type { MemberStore } from "../members/member-store.js";
import type { TokenSecretStore } from "../service/token-keys.js";

/** A store that needs nothing but its clients, plus the optional start-up step. */
export interface ConfiguredStore {
  readonly store: LeaseStore;
  /** Membership, beside the leases: a second table, or a second container partitioned on /group. */
  readonly members: MemberStore;
  /** Where the token secret is kept when HA_LEASE_SECRET is not set: a row of the lease store. */
  readonly secrets: TokenSecretStore;
  /** Creates the tables or containers when configured to (HA_STORE_CREATE). */
  prepare(options?: { abortSignal?: AbortSignal }): Promise<void>;
  /** Releases the clients' timers and sockets (PostgreSQL: resolves once every connection has ended). */
  close(): void | Promise<void>;
}

/** What only the local host can give: never read from the environment. */
export interface CreateConfiguredStoreOptions {
  /**
   * The PEM certificate of a Cosmos emulator started by this process. When set, the
   * Cosmos client trusts exactly this certificate (and nothing else); verification of
   * chain, expiry and host name stays on. Production never sets it.
   */
  readonly trustedCosmosCertificate?: string;
}
