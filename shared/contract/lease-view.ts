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

/** One utype's lease: its live primary or null, with the service's I and T. */
export interface LeaseView {
  readonly utype: string;
  readonly primary: PrimaryView | null;
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
