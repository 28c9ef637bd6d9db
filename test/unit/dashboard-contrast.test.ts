import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

/**
 * docs/dashboard.md promises every text colour of the dashboard a contrast of at least
 * 4.5:1 (WCAG AA) on the background it is drawn on. The pairs are read from app.css's
 * custom properties, so a colour changed there is checked here.
 */
const css = readFileSync(new URL("../../functions/dashboard/app.css", import.meta.url), "utf8");
const colours = new Map([...css.matchAll(/--([a-z-]+):\s*(#[0-9a-f]{6})\s*;/gi)].map((match) => [match[1]!, match[2]!]));

/** Relative luminance and contrast ratio as WCAG 2.x defines them. */
function luminance(hex: string): number {
  const [r, g, b] = [1, 3, 5].map((at) => {
    const channel = Number.parseInt(hex.slice(at, at + 2), 16) / 255;
    return channel <= 0.04045 ? channel / 12.92 : ((channel + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
}

function contrast(foreground: string, background: string): number {
  const [light, dark] = [luminance(foreground), luminance(background)].sort((a, b) => b - a);
  return (light! + 0.05) / (dark! + 0.05);
}

/** [text, background] as app.css draws them. */
const PAIRS: [string, string][] = [
  ["text", "bg"],
  ["text", "panel"],
  ["muted", "bg"],
  ["muted", "panel"],
  ["focus", "bg"],
  ["focus", "panel"],
  ["held-fg", "held-bg"],
  ["joining-fg", "joining-bg"],
  ["unreachable-fg", "unreachable-bg"],
  ["leaving-fg", "leaving-bg"],
  ["revoked-fg", "revoked-bg"],
  ["vacant-fg", "vacant-bg"],
  ["vacant-fg", "bg"],
  ["joining-fg", "bg"],
  ["revoked-fg", "bg"],
  ["button-fg", "button-bg"],
  ["banner-fg", "banner-bg"],
];

describe("the dashboard's colours", () => {
  it.each(PAIRS)("--%s on --%s has a contrast of at least 4.5:1", (foreground, background) => {
    const fg = colours.get(foreground);
    const bg = colours.get(background);
    expect(fg, `--${foreground} in app.css`).toBeDefined();
    expect(bg, `--${background} in app.css`).toBeDefined();
    expect(contrast(fg!, bg!)).toBeGreaterThanOrEqual(4.5);
  });

  it("gives each member state and role state a colour of its own, so that colour adds to the word", () => {
    const backgrounds = ["held-bg", "joining-bg", "unreachable-bg", "leaving-bg", "revoked-bg", "vacant-bg"].map((name) => colours.get(name));
    expect(new Set(backgrounds).size).toBe(backgrounds.length);
  });
});
