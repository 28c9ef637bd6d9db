/** The live primary of a utype, as GET /api/primary/{utype} shows it (SPEC §4). */
export interface PrimaryView {
  readonly uuid: string;
  readonly address: string | null;
  readonly epoch: number;
  /** ISO-8601 UTC. */
  readonly renewedAt: string;
  readonly expiresInMs: number;
  /**
   * Always present. True once the lease was revoked (DELETE without its token): the holder
   * can no longer renew it, and nobody takes over before it expires.
   */
  readonly revoked: boolean;
}

/** One utype's lease: its live primary or null, the role's epoch, and the service's I and T. */
export interface LeaseView {
  readonly utype: string;
  readonly primary: PrimaryView | null;
  /**
   * The role's current epoch, whether or not anyone holds the lease now: the stored
   * entry's epoch (the last term's, after a release or an expiry), 0 when the role never
   * had a holder. Equal to `primary.epoch` while there is a primary. It is what a new
   * downstream fencing target should be seeded with: the next primary's epoch is higher.
   */
  readonly epoch: number;
  readonly intervalMs: number;
  readonly timeoutMs: number;
}

/** GET /api/primary: name resolving across roles, live primaries only. */
export interface PrimaryList {
  readonly primaries: readonly LeaseView[];
}

/** GET /api/health: 200 with `ok`, 503 with `unavailable` (and the error object). */
export interface HealthView {
  readonly status: "ok" | "unavailable";
  /** The store's kind: "table", "cosmos" or "memory". */
  readonly store: string;
}
