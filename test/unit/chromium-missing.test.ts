import { describe, expect, it } from "vitest";
import { launchChromium } from "../helpers/chromium.js";

describe("the browser test's launcher", () => {
  it("fails with how to install Chromium when the binary is missing, never skipping the test", async () => {
    const launching = launchChromium("/nonexistent/ha-module/chromium");
    await expect(launching).rejects.toThrow(/needs Chromium at \/nonexistent\/ha-module\/chromium, which is missing/);
    await expect(launching).rejects.toThrow(/apt-get install -y chromium.*HA_CHROMIUM/s);
  });
});
