import path from "node:path";
import { ESLint } from "eslint";
import { describe, expect, it } from "vitest";

/**
 * The dependency rules of eslint.config.js, each shown to fire: a rule that cannot fail
 * would let the layering rot unseen. Every case lints one import line as if it were in
 * the named file, through the project's real configuration.
 */
const ROOT = path.resolve(import.meta.dirname, "..", "..");
const eslint = new ESLint({ cwd: ROOT });

async function restrictedImports(file: string, specifier: string): Promise<string[]> {
  const [result] = await eslint.lintText(`import "${specifier}";\n`, { filePath: path.join(ROOT, file) });
  return (result?.messages ?? []).filter((message) => message.ruleId === "no-restricted-imports").map((message) => message.message);
}

describe("the import rules of shared/ and functions/", () => {
  it.each([
    ["shared/contract/x.ts", "../lease/lease.js", /contract\/ imports nothing/],
    ["shared/contract/x.ts", "node:crypto", /contract\/ imports nothing/],
    ["shared/lease/x.ts", "../store/table-store.js", /the store port lives here/],
    ["shared/lease/x.ts", "../config/server-config.js", /lease\/ \(the domain\)/],
    ["shared/lease/x.ts", "@azure/data-tables", /lease\/ \(the domain\)/],
    ["shared/lease/x.ts", "../members/member.js", /lease\/ \(the domain\)/],
    ["shared/service/x.ts", "../lease/lease.js", /service\/ \(the plumbing/],
    ["shared/members/x.ts", "../lease/lease-store.js", /never leases/],
    ["shared/service/x.ts", "@azure/data-tables", /service\/ \(the plumbing/],
    ["shared/members/x.ts", "../store/members-table-store.js", /membership's domain/],
    ["shared/members/x.ts", "../http/runtime.js", /membership's domain/],
    ["shared/members/x.ts", "../config/members-config.js", /membership's domain/],
    ["shared/members/x.ts", "@azure/cosmos", /membership's domain/],
    ["shared/sdk/x.ts", "../members/member-service.js", /SDK users install none of the server/],
    ["shared/config/x.ts", "../lease/lease.js", /config\/ imports only/],
    ["shared/sdk/x.ts", "../lease/lease-service.js", /SDK users install none of the server/],
    ["shared/sdk/x.ts", "../http/route.js", /SDK users install none of the server/],
    ["shared/sdk/x.ts", "@azure/functions", /SDK users install none of the server/],
    ["shared/sdk/election/x.ts", "../../members/group-cursor.js", /SDK users install none of the server/],
    ["shared/sdk/membership/x.ts", "../../participant/participant-service.js", /SDK users install none of the server/],
    ["shared/sdk/transport/x.ts", "../election/primary-elector.js", /never the election, membership or fencing/],
    ["shared/sdk/loop/x.ts", "../membership/member-session.js", /never the election, membership or fencing/],
    ["shared/sdk/auth/x.ts", "../../lease/lease-token.js", /never the election, membership or fencing/],
    ["shared/sdk/fencing/x.ts", "../transport/ha-client.js", /fencing\/ stands alone/],
    ["shared/sdk/fencing/x.ts", "../../contract/lease-view.js", /fencing\/ stands alone/],
    ["shared/store/x.ts", "../http/runtime.js", /store\/ \(the adapters\)/],
    ["shared/store/x.ts", "../../functions/routes.js", /store\/ \(the adapters\)/],
    ["shared/http/x.ts", "../store/table-store.js", /never imports adapters/],
    ["shared/http/x.ts", "../host/local-host.js", /never imports adapters/],
    ["shared/host/x.ts", "../../functions/routes.js", /given its routes/],
    ["shared/host/x.ts", "../store/configured-store.js", /given its routes/],
    ["shared/cli/serve.ts", "../../functions/routes.js", /Only the CLI's composition root/],
    ["shared/cli/commands/serve.ts", "../../../functions/routes.js", /Only the CLI's composition root/],
    ["functions/x.ts", "../shared/host/local-host.js", /what Azure runs/],
    ["functions/x.ts", "../shared/cli/serve.js", /what Azure runs/],
  ])("%s may not import %s", async (file, specifier, message) => {
    const messages = await restrictedImports(file, specifier);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatch(message);
  });

  it.each([
    ["shared/contract/x.ts", "./error-codes.js"],
    ["shared/lease/x.ts", "../contract/timing.js"],
    ["shared/lease/x.ts", "node:crypto"],
    ["shared/lease/x.ts", "../service/signed-token.js"],
    ["shared/members/x.ts", "../service/signed-token.js"],
    ["shared/service/x.ts", "node:crypto"],
    ["shared/members/x.ts", "../contract/members.js"],
    ["shared/members/x.ts", "../service/request-budget.js"],
    ["shared/members/x.ts", "node:crypto"],
    ["shared/store/x.ts", "../members/member-store.js"],
    ["shared/http/x.ts", "../members/member-service.js"],
    ["shared/sdk/x.ts", "../contract/members.js"],
    ["shared/sdk/x.ts", "../contract/lease-view.js"],
    ["shared/sdk/transport/x.ts", "../../contract/participant.js"],
    ["shared/sdk/transport/x.ts", "../loop/elector-clock.js"],
    ["shared/sdk/election/x.ts", "../transport/lease-transport.js"],
    ["shared/sdk/election/x.ts", "../membership/member-session.js"],
    ["shared/sdk/fencing/x.ts", "../loop/option-checks.js"],
    ["shared/store/x.ts", "../lease/lease-store.js"],
    ["shared/store/x.ts", "@azure/cosmos"],
    ["shared/http/x.ts", "../lease/lease-service.js"],
    ["shared/host/x.ts", "../http/dispatch.js"],
    ["shared/cli/main.ts", "../../functions/routes.js"],
    ["shared/cli/x.ts", "../host/local-host.js"],
    ["functions/x.ts", "../shared/http/answers.js"],
  ])("%s may import %s", async (file, specifier) => {
    expect(await restrictedImports(file, specifier)).toEqual([]);
  });
});
