import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EmbeddedAzurite } from "../../shared/host/embedded-azurite.js";
import { startTestAzurite } from "../helpers/azurite.js";
import { call, primaryOf } from "../helpers/e2e-http.js";
import { startServiceProcess, type ServiceProcess } from "../helpers/service-process.js";

/**
 * The lease-token secret kept in the store (docs/configuration.md, HA_LEASE_SECRET): real
 * `ha-module serve` processes on one Azurite table, none given HA_LEASE_SECRET. A token one
 * instance issued is taken by another, and by an instance started after every earlier one
 * stopped (an upgrade, a restart of all of them): a release with it is a release — the
 * standby may take over at once — never a revoke that makes it wait out T.
 */
describe("serve without HA_LEASE_SECRET: one token secret per store", () => {
  let azurite: EmbeddedAzurite;
  const instances: ServiceProcess[] = [];
  let env: Record<string, string>;

  const serve = async (): Promise<ServiceProcess> => {
    const instance = await startServiceProcess({ ...env, PORT: "0" });
    instances.push(instance);
    return instance;
  };
  const stop = async (instance: ServiceProcess): Promise<void> => {
    instances.splice(instances.indexOf(instance), 1);
    await instance.stop();
  };
  const acquire = async (instance: ServiceProcess, utype: string, uuid: string): Promise<string> => {
    const reply = await call(instance.url, "PUT", `/primary/${utype}`, { uuid });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    return reply.body["lease"] as string;
  };
  const release = (instance: ServiceProcess, utype: string, uuid: string, lease: string) =>
    call(instance.url, "DELETE", `/primary/${utype}?uuid=${uuid}&lease=${encodeURIComponent(lease)}`);

  beforeAll(async () => {
    azurite = await startTestAzurite();
    env = {
      HA_TABLE_CONNECTION_STRING: azurite.connectionString,
      HA_TABLE_NAME: `secret${process.pid}`,
      HA_MEMBERS_TABLE_NAME: `secretmembers${process.pid}`,
      HA_LEASE_SECRET: "",
    };
  });

  afterAll(async () => {
    await Promise.all(instances.map((instance) => instance.stop()));
    await azurite?.close();
  });

  it("a release through another instance, with the token the first issued, releases", async () => {
    const [a, b] = await Promise.all([serve(), serve()]);
    const lease = await acquire(a!, "through-another", "holder-1");
    const released = await release(b!, "through-another", "holder-1", lease);
    expect(released.status).toBe(200);
    // A revoke would leave the holder shown, revoked, until its lease ran out.
    expect(primaryOf(released)).toBeNull();
  });

  it("a release through an instance started after every earlier one stopped releases too", async () => {
    const first = await serve();
    const lease = await acquire(first, "after-restart", "holder-2");
    for (const instance of [...instances]) await stop(instance);
    const next = await serve();
    const released = await release(next, "after-restart", "holder-2", lease);
    expect(released.status).toBe(200);
    expect(primaryOf(released)).toBeNull();
  });

  it("keeps the secret out of the roles: the list names no row of its", async () => {
    const instance = await serve();
    await acquire(instance, "listed", "holder-3");
    const listed = await call(instance.url, "GET", "/primary?standbys=true");
    expect(listed.status).toBe(200);
    const utypes = (listed.body["primaries"] as { utype: string }[]).map((entry) => entry.utype);
    expect(utypes).toContain("listed");
    expect(utypes.filter((utype) => utype.startsWith("~"))).toEqual([]);
  });
});
