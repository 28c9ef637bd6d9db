/**
 * A response that cannot be trusted: its body does not parse, lacks a field the REST
 * contract promises, or names another utype than the one asked for (a "corrupted
 * message" in the protocol's terms). The elector counts it as a failed call and never acts on its content.
 */
export class CorruptedMessageError extends Error {
  /** Always "CorruptedMessageError". */
  override readonly name = "CorruptedMessageError";

  constructor(
    message: string,
    /** The HTTP status the corrupted body came with. */
    readonly status: number,
  ) {
    super(message);
  }
}
