#!/usr/bin/env node
/**
 * Copies the dashboard's files (functions/dashboard/: HTML, CSS and browser JavaScript,
 * which TypeScript does not compile) beside the compiled handlers in <outDir>/functions/
 * dashboard/, where functions/dashboard-assets.ts looks for them. `npm run build` runs it
 * after tsc; scripts/package.mjs calls copyDashboardAssets for the deploy zip.
 *
 * Usage: node scripts/dashboard-assets.mjs [outDir]   (default: dist)
 */
import { cp, rm } from "node:fs/promises";
import path from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const DASHBOARD_SOURCE = path.join(ROOT, "functions", "dashboard");

/** Replaces <outDir>/functions/dashboard with the sources' copy, so a removed file does not linger. */
export async function copyDashboardAssets(outDir) {
  const target = path.join(outDir, "functions", "dashboard");
  await rm(target, { recursive: true, force: true });
  await cp(DASHBOARD_SOURCE, target, { recursive: true });
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await copyDashboardAssets(path.resolve(ROOT, process.argv[2] ?? "dist"));
}
