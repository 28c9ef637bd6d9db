/** One sample line of Prometheus text: `name{label="value",…} number`. */
export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** Every sample of an exposition, comments skipped; a line that is neither fails loudly. */
export function parseSamples(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const found = /^([A-Za-z_:][A-Za-z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (found === null) throw new Error(`Not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const label of (found[2] ?? "").matchAll(/([A-Za-z_][A-Za-z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[label[1]!] = label[2]!;
    samples.push({ name: found[1]!, labels, value: Number(found[3]) });
  }
  return samples;
}

/** The sum of the samples named `name` whose labels include `labels` (0 when none). */
export function sumOf(text: string, name: string, labels: Record<string, string> = {}): number {
  return parseSamples(text)
    .filter((sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value))
    .reduce((sum, sample) => sum + sample.value, 0);
}

/** Counts by one label's values, for a counter: {renewed: 3, acquired: 1}. */
export function countsBy(text: string, name: string, label: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const sample of parseSamples(text)) {
    if (sample.name !== name) continue;
    const key = sample.labels[label] ?? "";
    counts[key] = (counts[key] ?? 0) + sample.value;
  }
  return counts;
}
