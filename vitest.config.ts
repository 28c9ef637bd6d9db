import { relative } from "node:path";
import { configDefaults, defineConfig } from "vitest/config";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * The files that drive real processes for tens of seconds, most of them short: the chaos
 * runs, the benches, the packed package, the end-to-end suites and the simulations.
 */
const LONG_FIRST = ["test/chaos/", "test/bench/", "test/package/", "test/e2e/", "test/sdk/sim-", "test/sdk/elector-simulation", "test/host/"];

/** Folders whose test files share worker processes (see the "shared" project below). */
const SHARED = ["test/unit/", "test/sdk/", "test/store/", "test/functions/"];

/**
 * Files of those folders that still get a process each: the SDK's simulations (seconds of
 * CPU each), and the Azure telemetry set-up, which installs the process's global meter
 * provider and must find none before it.
 */
const OWN_PROCESS = ["test/sdk/sim-*.test.ts", "test/sdk/*-simulation.test.ts", "test/functions/azure-telemetry.test.ts"];

/**
 * Without the durations of an earlier run (CI starts from `npm ci`, which empties the cache
 * in node_modules/.vite), vitest starts the largest files first, so the short files of
 * LONG_FIRST, a chaos run of 45 s among them, started last and one worker finished alone.
 * These start first instead, in vitest's order within each group; with durations cached,
 * vitest's own order (the longest first) stands.
 */
class LongFilesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const root = this.ctx.config.root;
    const timed = files.every((file) => this.ctx.cache.getFileTestResults(`${file.project.name}:${relative(root, file.moduleId)}`) !== undefined);
    if (timed) return sorted;
    const group = (file: TestSpecification): number => {
      const index = LONG_FIRST.findIndex((prefix) => relative(root, file.moduleId).startsWith(prefix));
      return index === -1 ? LONG_FIRST.length : index;
    };
    return sorted.map((file, order) => ({ file, order })).sort((a, b) => group(a.file) - group(b.file) || a.order - b.order).map(({ file }) => file);
  }
}

export default defineConfig({
  test: {
    // Store and end-to-end suites start real servers; give them room on a loaded 2-core box.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    maxWorkers: 2,
    sequence: { sequencer: LongFilesFirst },
    projects: [
      {
        extends: true,
        // The files of SHARED share their worker processes: starting a process and
        // importing the modules again for each of ~110 files of milliseconds cost more
        // than the tests. A test there therefore leaves nothing global behind
        // (process.env, a global provider, a spy it does not restore, an emulator or a
        // server it does not close); one that must goes in another folder, or in OWN_PROCESS.
        // The process's own monitors, which createRuntime starts, are stopped after each file.
        test: { name: "shared", include: SHARED.map((folder) => `${folder}**/*.test.ts`), exclude: [...configDefaults.exclude, ...OWN_PROCESS], isolate: false, setupFiles: ["test/helpers/shared-worker-setup.ts"] },
      },
      { extends: true, test: { name: "own-process", include: OWN_PROCESS } },
      { extends: true, test: { name: "isolated", include: ["test/**/*.test.ts"], exclude: [...configDefaults.exclude, ...SHARED.map((folder) => `${folder}**`)] } },
    ],
  },
});
