import { describe, expect, it } from "vitest";
import { chooseChromium, DEBIAN_CHROMIUM, launchChromium } from "../helpers/chromium.js";

describe("the browser test's launcher", () => {
  it("takes HA_CHROMIUM first, then Debian's Chromium, then the packaged one, so a bare machine needs nothing installed", () => {
    const debianThere = (path: string): boolean => path === DEBIAN_CHROMIUM;
    const nothingThere = (): boolean => false;
    expect(chooseChromium({ HA_CHROMIUM: "/opt/chrome/chrome" }, debianThere)).toEqual({ kind: "HA_CHROMIUM", path: "/opt/chrome/chrome" });
    expect(chooseChromium({}, debianThere)).toEqual({ kind: "debian", path: DEBIAN_CHROMIUM });
    expect(chooseChromium({ HA_CHROMIUM: "" }, debianThere)).toEqual({ kind: "debian", path: DEBIAN_CHROMIUM });
    expect(chooseChromium({}, nothingThere)).toEqual({ kind: "packaged" });
  });

  it("fails, naming the setting, when HA_CHROMIUM names a missing binary, never falling back or skipping", async () => {
    const launching = launchChromium({ kind: "HA_CHROMIUM", path: "/nonexistent/ha-module/chromium" });
    await expect(launching).rejects.toThrow(/Chromium at \/nonexistent\/ha-module\/chromium \(HA_CHROMIUM\), which is missing/);
    await expect(launching).rejects.toThrow(/unset it to use Debian's.*@sparticuz\/chromium/s);
  });
});
