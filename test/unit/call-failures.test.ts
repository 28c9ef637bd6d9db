import { describe, expect, it } from "vitest";
import { FailureReport, unfixableCallHint } from "../../shared/cli/call-failures.js";
import { ForbiddenError } from "../../shared/sdk/auth/forbidden-error.js";
import { UnauthorizedError } from "../../shared/sdk/auth/unauthorized-error.js";
import { HaRequestError } from "../../shared/sdk/transport/ha-request-error.js";

const ENDPOINT = "http://127.0.0.1:7071/api";

/** A FailureReport fed by hand, with every line it says. */
function report(): { failures: FailureReport; said: string[] } {
  const said: string[] = [];
  return { failures: new FailureReport(ENDPOINT, (text) => said.push(text)), said };
}

const forbidden = (): ForbiddenError => new ForbiddenError("UpdateHeartBeat(x)", "managed identity b", "The identity b may not hold or release the role x");
const unauthorized = (): UnauthorizedError => new UnauthorizedError("GetPrimary(x)", ENDPOINT, "Send the API key in the x-functions-key header.");

describe("FailureReport: how elect and run report what retrying cannot fix", () => {
  it("a 403 is said once, and the reads answered meanwhile (another identity takes and gives back the role) do not end it", () => {
    const { failures, said } = report();
    expect(failures.failed(forbidden())).toBe(true);
    for (let n = 0; n < 8; n += 1) {
      failures.answered("read");
      failures.failed(forbidden());
    }
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(/403 Forbidden[\s\S]*Trying again, less and less often/);
    // Only an accepted write ends it; the next 403 is a new report.
    failures.answered("write");
    expect(said[1]).toMatch(/^the service answers again and accepted a write \(it answered 403 before\); competing as before\.$/);
    failures.failed(forbidden());
    expect(said).toHaveLength(3);
  });

  it("a 401 or 404 refuses every call: any answer ends it", () => {
    const { failures, said } = report();
    failures.failed(unauthorized());
    failures.failed(unauthorized());
    failures.answered("read");
    failures.answered("read");
    expect(said).toHaveLength(2);
    expect(said[1]).toMatch(/^the service answers again \(it answered 401 before\)/);
  });

  it("prints each failure a retry may fix, and an answer with nothing refused says nothing", () => {
    const { failures, said } = report();
    failures.answered("write");
    expect(failures.failed(new HaRequestError("GetPrimary(x): 503 StoreUnavailable", "StoreUnavailable", 503))).toBe(false);
    expect(said).toEqual(["GetPrimary(x): 503 StoreUnavailable"]);
  });
});

describe("unfixableCallHint for a 401", () => {
  it("names the key when a key was refused, the token's audience when a token was", () => {
    expect(unfixableCallHint(unauthorized(), ENDPOINT)).toMatch(/^The function key is wrong or missing: pass --key KEY or set HA_API_KEY/);
    const token = new UnauthorizedError("GetPrimary(x)", ENDPOINT, "The token is for another audience.", { identity: "managed identity (system-assigned) for api://wrong" });
    const hint = unfixableCallHint(token, ENDPOINT);
    expect(hint).toMatch(/refused this managed identity's token .* another audience .* Give --audience \(or HA_AUTH_AUDIENCE\)/);
    expect(hint).not.toMatch(/function key|--key/);
  });
});
