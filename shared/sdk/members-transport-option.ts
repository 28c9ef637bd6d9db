import { HaClient } from "./ha-client.js";
import { isMembersTransport, type MembersTransport } from "./members-transport.js";
import { checkEndpoint, checkOptionalString } from "./option-checks.js";

/**
 * The transport a MemberSession or MembersWatcher was given: `transport` itself, or an
 * HaClient for `endpoint` (and `apiKey`), exactly one of the two.
 */
export function membersTransportOf(options: { readonly transport?: unknown; readonly endpoint?: unknown; readonly apiKey?: unknown }): MembersTransport {
  if (options.transport !== undefined && options.endpoint !== undefined) {
    throw new TypeError("Expected either `transport` or `endpoint`, not both: `endpoint` builds an HaClient, `transport` replaces it.");
  }
  if (options.transport !== undefined) {
    if (!isMembersTransport(options.transport)) throw new TypeError("Expected `transport` to implement MembersTransport (memberHeartbeat, leaveGroup, listMembers), e.g. an HaClient.");
    return options.transport;
  }
  if (options.endpoint === undefined) throw new TypeError("Expected `endpoint` (the service URL, e.g. http://127.0.0.1:7071/api) or `transport` to be set.");
  const endpoint = checkEndpoint("endpoint", options.endpoint);
  const apiKey = checkOptionalString("apiKey", options.apiKey);
  return new HaClient({ endpoint, ...(apiKey === undefined ? {} : { apiKey }) });
}
