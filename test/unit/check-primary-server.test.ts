import { request } from "node:http";
import { describe, expect, it } from "vitest";
import { localHostFor, startCheckPrimaryServer } from "../../shared/cli/supervise/check-primary-server.js";
import { UsageError } from "../../shared/cli/usage-error.js";

/** One raw request, so that a HEAD answer's (absent) body can be seen. */
function send(url: string, method: string): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method }, (response) => {
      let body = "";
      response.on("data", (chunk: Buffer) => (body += chunk.toString()));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("CheckPrimary of `ha-module run`", () => {
  it("answers GET with the state now, HEAD with the same status and no body, other methods 405", async () => {
    const state: { epoch: number | undefined } = { epoch: 3 };
    const server = await startCheckPrimaryServer(state, 0);
    try {
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/check-primary$/);
      expect(server.localUrl).toBe(server.url);
      expect(await send(server.url, "GET")).toMatchObject({ status: 200, body: '{"isPrimary":true,"epoch":3}' });
      expect(await send(server.url, "HEAD")).toMatchObject({ status: 200, body: "" });
      state.epoch = undefined;
      expect(await send(server.url, "GET")).toMatchObject({ status: 503, body: '{"isPrimary":false}' });
      expect(await send(server.url, "HEAD")).toMatchObject({ status: 503, body: "" });
      expect(await send(server.url, "POST")).toMatchObject({ status: 405, headers: { allow: "GET, HEAD" } });
    } finally {
      await server.close();
    }
  });

  it("answers 503 while the primary rides through an outage (docs/protocol.md#ride-through): who asks here acts without fencing", async () => {
    const state = { epoch: 3 as number | undefined, exclusive: 1200, exclusiveTimeLeftMs(): number { return this.exclusive; } };
    const server = await startCheckPrimaryServer(state, 0);
    try {
      expect(await send(server.url, "GET")).toMatchObject({ status: 200, body: '{"isPrimary":true,"epoch":3}' });
      state.exclusive = 0;
      expect(await send(server.url, "GET")).toMatchObject({ status: 503, body: '{"isPrimary":false,"ridingThrough":true}' });
      expect(await send(server.url, "HEAD")).toMatchObject({ status: 503, body: "" });
      state.epoch = undefined;
      expect(await send(server.url, "GET")).toMatchObject({ status: 503, body: '{"isPrimary":false}' });
    } finally {
      await server.close();
    }
  });

  // Another loopback address (Linux routes all of 127/8 to lo): the flag is honoured, and
  // the test still opens nothing to other machines.
  it.runIf(process.platform === "linux")("--check-host listens there, and only there", async () => {
    const server = await startCheckPrimaryServer({ epoch: 1 }, 0, "127.0.0.2");
    try {
      const port = new URL(server.url).port;
      expect(server.url).toBe(`http://127.0.0.2:${port}/check-primary`);
      expect(server.localUrl).toBe(server.url);
      expect((await send(server.url, "GET")).status).toBe(200);
      await expect(send(`http://127.0.0.1:${port}/check-primary`, "GET")).rejects.toThrow(/ECONNREFUSED/);
    } finally {
      await server.close();
    }
  });

  it("a wildcard --check-host gives the command a loopback HA_CHECK_URL", () => {
    expect(localHostFor("0.0.0.0")).toBe("127.0.0.1");
    expect(localHostFor("::")).toBe("::1");
    expect(localHostFor("10.0.0.4")).toBe("10.0.0.4");
  });

  it("refuses a host name, and a port in use, as usage errors naming the flag", async () => {
    await expect(startCheckPrimaryServer({ epoch: 1 }, 0, "my-host")).rejects.toThrow(/--check-host must be an IP address of this machine/);
    const first = await startCheckPrimaryServer({ epoch: 1 }, 0);
    try {
      const port = Number(new URL(first.url).port);
      const second = startCheckPrimaryServer({ epoch: 1 }, port);
      await expect(second).rejects.toBeInstanceOf(UsageError);
      await expect(second).rejects.toThrow(`--check-port ${port} is in use on 127.0.0.1`);
    } finally {
      await first.close();
    }
  });
});
