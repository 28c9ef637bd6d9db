import { HEAD_A, HEAD_B, TEST_AUDIENCE, TEST_TENANT } from "./local-issuer.js";

/** Named keys of the grants tests: two head nodes and an operator. */
export const KEYS = {
  "head-a": "head-a-key-0123456789abcdef",
  "head-b": "head-b-key-0123456789abcdef",
  ops: "ops-key-0123456789abcdef0123",
} as const;

/**
 * Two head nodes, each holding only its own cluster's roles and joining only its own group
 * (by key, and head A also by its managed identity), and an operator who may revoke any role.
 * HEAD_B's identity is in no grant: it may read, never write.
 */
export const GRANTS = [
  { callers: ["key:head-a", HEAD_A.oid], hold: ["cluster-a.*"], join: ["cluster-a"] },
  { callers: ["key:head-b"], hold: ["cluster-b.*"], join: ["cluster-b"] },
  { callers: ["key:ops"], revoke: ["*"] },
];

/** The app settings of that set-up; `authority` is the local issuer's. */
export function grantSettings(authority: string): Record<string, string> {
  return {
    HA_API_KEYS: Object.entries(KEYS)
      .map(([name, key]) => `${name}=${key}`)
      .join(","),
    HA_GRANTS: JSON.stringify(GRANTS),
    HA_AUTH_TENANT_ID: TEST_TENANT,
    HA_AUTH_AUDIENCE: TEST_AUDIENCE,
    HA_AUTH_AUTHORITY: authority,
  };
}

export { HEAD_A, HEAD_B };
