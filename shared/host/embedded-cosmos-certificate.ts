import { generateKeyPairSync, randomBytes, sign } from "node:crypto";

/** A certificate and its private key, both PEM. */
export interface SelfSignedCertificate {
  readonly certificatePem: string;
  readonly privateKeyPem: string;
}

const OID_ECDSA_WITH_SHA256 = "1.2.840.10045.4.3.2";
const OID_COMMON_NAME = "2.5.4.3";
const OID_SUBJECT_ALT_NAME = "2.5.29.17";
const HOUR_MS = 3_600_000;

/**
 * Makes a fresh self-signed certificate (ECDSA P-256) for 127.0.0.1 and localhost.
 *
 * Why: the emulator ships a certificate that expired in 2021 and names neither address,
 * so trusting it would mean switching verification off. A certificate made here, once
 * per process and trusted only by the HTTPS agent that talks to this one emulator,
 * keeps full verification (chain, expiry, host name) on.
 *
 * Node can sign but cannot build an X.509 certificate, so the few DER structures a
 * certificate needs are encoded below (RFC 5280 §4.1).
 */
export function createSelfSignedCertificate(commonName: string, now: Date = new Date(), serialBytes: Buffer = randomBytes(16)): SelfSignedCertificate {
  const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" });
  const name = sequence(set(sequence(oid(OID_COMMON_NAME), utf8String(commonName))));
  const signatureAlgorithm = sequence(oid(OID_ECDSA_WITH_SHA256));
  // Serial numbers are positive: clear the top bit of 16 random bytes.
  const serial = Buffer.from(serialBytes);
  serial[0] = (serial[0] ?? 0) & 0x7f;
  const subjectAltName = sequence(
    tlv(0x87, Buffer.from([127, 0, 0, 1])), // iPAddress
    tlv(0x82, Buffer.from("localhost", "ascii")), // dNSName
  );
  const tbsCertificate = sequence(
    tlv(0xa0, integer(Buffer.from([2]))), // version v3
    integer(serial),
    signatureAlgorithm,
    name,
    sequence(time(new Date(now.getTime() - HOUR_MS)), time(new Date(now.getTime() + 365 * 24 * HOUR_MS))),
    name,
    publicKey.export({ type: "spki", format: "der" }),
    tlv(0xa3, sequence(sequence(oid(OID_SUBJECT_ALT_NAME), tlv(0x04, subjectAltName)))),
  );
  const signature = sign("sha256", tbsCertificate, privateKey);
  const certificate = sequence(tbsCertificate, signatureAlgorithm, tlv(0x03, Buffer.concat([Buffer.from([0]), signature])));
  return {
    certificatePem: pem("CERTIFICATE", certificate),
    privateKeyPem: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
  };
}

function tlv(tag: number, content: Buffer): Buffer {
  return Buffer.concat([Buffer.from([tag]), length(content.length), content]);
}

function length(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let rest = n; rest > 0; rest = Math.floor(rest / 256)) bytes.unshift(rest % 256);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

function sequence(...items: Buffer[]): Buffer {
  return tlv(0x30, Buffer.concat(items));
}

function set(...items: Buffer[]): Buffer {
  return tlv(0x31, Buffer.concat(items));
}

/**
 * A non-negative INTEGER from big-endian bytes, in DER's one encoding: no leading zero byte
 * unless the next byte's top bit is set (OpenSSL refuses the key or certificate with
 * "illegal padding" otherwise: a random serial starting 0x00 0x00–0x7f did, 1 in 256).
 */
function integer(bytes: Buffer): Buffer {
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0 && ((bytes[start + 1] ?? 0) & 0x80) === 0) start += 1;
  const minimal = bytes.subarray(start);
  const first = minimal[0] ?? 0;
  return tlv(0x02, first & 0x80 ? Buffer.concat([Buffer.from([0]), minimal]) : minimal);
}

function oid(dotted: string): Buffer {
  const [first = 0, second = 0, ...rest] = dotted.split(".").map(Number);
  const bytes = [40 * first + second];
  for (const arc of rest) {
    const groups = [arc & 0x7f];
    for (let value = arc >>> 7; value > 0; value >>>= 7) groups.unshift((value & 0x7f) | 0x80);
    bytes.push(...groups);
  }
  return tlv(0x06, Buffer.from(bytes));
}

function utf8String(text: string): Buffer {
  return tlv(0x0c, Buffer.from(text, "utf8"));
}

/** UTCTime through 2049, GeneralizedTime after (RFC 5280 §4.1.2.5). */
function time(date: Date): Buffer {
  const iso = date.toISOString(); // 2026-11-22T05:40:43.000Z
  const digits = iso.slice(0, 19).replace(/[-T:]/g, "");
  return date.getUTCFullYear() < 2050
    ? tlv(0x17, Buffer.from(`${digits.slice(2)}Z`, "ascii"))
    : tlv(0x18, Buffer.from(`${digits}Z`, "ascii"));
}

function pem(label: string, der: Buffer): string {
  const lines = der.toString("base64").match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join("\n")}\n-----END ${label}-----\n`;
}
