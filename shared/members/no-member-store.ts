import { StoreUnavailableError } from "../service/store-unavailable-error.js";
import type { MemberStore } from "./member-store.js";

/**
 * The membership store of a runtime built without one (tests of the lease routes): every
 * call fails as an unreachable store does, so a member route answers 503 and nothing is
 * ever kept where nobody configured it. The composition roots always pass a real store.
 */
export function noMemberStore(): MemberStore {
  const refuse = async (): Promise<never> => {
    throw new StoreUnavailableError("No membership store is configured in this runtime.");
  };
  return { kind: "none", read: refuse, listGroup: refuse, listAll: refuse, create: refuse, replace: refuse, renew: refuse, delete: refuse, writeMarker: refuse };
}
