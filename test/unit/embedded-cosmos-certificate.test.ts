import { X509Certificate } from "node:crypto";
import { createServer } from "node:https";
import { describe, expect, it } from "vitest";
import { createSelfSignedCertificate } from "../../shared/host/embedded-cosmos-certificate.js";

/** The embedded Cosmos emulator's certificate: DER a TLS server loads whatever its serial. */
describe("createSelfSignedCertificate", () => {
  // Serials whose first bytes are 0x00 then a byte under 0x80 have a redundant leading zero
  // unless it is dropped; one in 256 random serials did, and the server would not start.
  const serials: Array<[string, number[]]> = [
    ["a leading zero before a small byte", [0x00, 0x01]],
    ["two leading zeros", [0x00, 0x00, 0x7f]],
    ["a leading zero before a byte with its top bit set", [0x00, 0x80]],
    ["no leading zero", [0x42]],
  ];
  it.each(serials)("makes a certificate a TLS server loads, serial with %s", (_case, head) => {
    const serial = Buffer.concat([Buffer.from(head), Buffer.alloc(16 - head.length, 0x11)]);
    const { certificatePem, privateKeyPem } = createSelfSignedCertificate("ha-module test", new Date(), serial);
    const certificate = new X509Certificate(certificatePem);
    expect(certificate.subject).toContain("ha-module test");
    expect(() => createServer({ cert: certificatePem, key: privateKeyPem }).close()).not.toThrow();
  });
});
