import type { ParticipantHeartbeatAnswer, ParticipantHeartbeatBody, PartAnswer, PartResult } from "../../contract/participant.js";
import { CorruptedMessageError } from "./corrupted-message-error.js";

type Json = Record<string, unknown>;
type Kind = keyof ParticipantHeartbeatAnswer;
const KINDS: readonly Kind[] = ["roles", "reads", "members", "groups"];

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);

/** What names a part in the request and must name it in the answer: its utype, group and member, or group. */
function keyOf(kind: Kind, entry: Json): string {
  if (kind === "roles" || kind === "reads") return `utype ${JSON.stringify(entry["utype"])}`;
  if (kind === "members") return `member ${JSON.stringify(entry["group"])}/${JSON.stringify(entry["member"])}`;
  return `group ${JSON.stringify(entry["group"])}`;
}

/**
 * The 200 answer of POST /api/heartbeat, checked against the request it answers: one entry
 * per part, in the request's order, each naming its part (utype, group and member, group),
 * with an HTTP status and, where given, a Retry-After in seconds. A missing, extra or
 * reordered part makes the whole answer a CorruptedMessageError: no part is trusted.
 */
export function parseParticipantAnswer(body: unknown, request: ParticipantHeartbeatBody, status: number, what: string): ParticipantHeartbeatAnswer {
  const corrupted = (problem: string): CorruptedMessageError => new CorruptedMessageError(`${what}: corrupted message (${problem}).`, status);
  if (!isObject(body)) throw corrupted("the body is not a JSON object");
  const lists = KINDS.map((kind) => {
    const asked = (request[kind] ?? []) as unknown as readonly Json[];
    const answered = body[kind] ?? [];
    if (!Array.isArray(answered)) throw corrupted(`${kind} must be an array`);
    if (answered.length !== asked.length) throw corrupted(`${asked.length} ${kind} asked, ${answered.length} answered`);
    return answered.map((entry: unknown, index) => {
      if (!isObject(entry)) throw corrupted(`${kind}[${index}] must be an object`);
      const want = keyOf(kind, asked[index]!);
      const got = keyOf(kind, entry);
      if (got !== want) throw corrupted(`${kind}[${index}] answers ${got}, asked ${want}`);
      const { status: partStatus, retryAfter } = entry;
      if (typeof partStatus !== "number" || !Number.isInteger(partStatus) || partStatus < 100 || partStatus > 599) throw corrupted(`${kind}[${index}].status must be an HTTP status`);
      if (retryAfter !== undefined && (typeof retryAfter !== "number" || !Number.isFinite(retryAfter) || retryAfter < 0)) throw corrupted(`${kind}[${index}].retryAfter must be a number of seconds`);
      return entry as unknown as PartAnswer;
    });
  });
  const [roles, reads, members, groups] = lists as [never[], never[], never[], never[]];
  return { roles, reads, members, groups };
}

/** A part's reading as a result: what the single call would have returned, or thrown. */
export function readPart<T>(read: () => T): PartResult<T> {
  try {
    return { ok: true, value: read() };
  } catch (error) {
    return { ok: false, error };
  }
}

/** Each part as its own call, settled on its own: for a service without the participant route. */
export async function settlePart<T>(work: () => Promise<T>): Promise<PartResult<T>> {
  try {
    return { ok: true, value: await work() };
  } catch (error) {
    return { ok: false, error };
  }
}
