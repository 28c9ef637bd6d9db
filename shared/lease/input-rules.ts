/**
 * The input rules of the REST contract (SPEC §4), in one place: the server refuses what
 * breaks them with a 400, and the SDK refuses it before sending.
 */

/** utype and uuid: 1–128 characters of [A-Za-z0-9._:-], safe as Table keys and Cosmos ids. */
export const ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

/** `address` is free text of at most this many characters. */
export const MAX_ADDRESS_LENGTH = 512;

export function hasControlCharacter(value: string): boolean {
  for (const char of value) {
    const code = char.codePointAt(0) ?? 0;
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}
