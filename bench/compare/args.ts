/** A bench flag that must be a positive integer, e.g. `--rounds 5`; a clear error naming the flag otherwise. */
export function positiveFlag(name: string, text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < 1) throw new Error(`--${name} must be a positive integer (got ${JSON.stringify(text)}).`);
  return value;
}
