import js from "@eslint/js";
import tseslint from "typescript-eslint";

/**
 * The dependency direction of shared/ (README, "Project layout"): each folder lists what
 * it may import (an allow-list regex) or what it may not (a deny-list). Flat config keeps
 * the last block's options for a rule, so every source file falls in exactly one zone.
 * test/unit/import-rules.test.ts proves each zone fires.
 */
const only = (allowed, message) => ({
  "no-restricted-imports": ["error", { patterns: [{ regex: `^(?!${allowed.join("|")})`, message }] }],
});
const never = (denied, message) => ({
  "no-restricted-imports": ["error", { patterns: [{ regex: `^(${denied.join("|")})`, message }] }],
});
const SIBLING = "\\./";
const NODE = "node:";
const CONTRACT = "\\.\\./contract/";
const SERVICE = "\\.\\./service/";

const importZones = [
  {
    files: ["shared/contract/**/*.ts"],
    rules: only([SIBLING], "shared/contract/ imports nothing: it is the REST contract every other part depends on."),
  },
  {
    files: ["shared/service/**/*.ts"],
    rules: only([SIBLING, CONTRACT, NODE], "shared/service/ (the plumbing both domains run on: clocks, request budgets, admission, store call outcomes and errors, process load, signed tokens) imports only shared/contract/ and Node."),
  },
  {
    files: ["shared/lease/**/*.ts"],
    rules: only([SIBLING, CONTRACT, SERVICE, NODE], "shared/lease/ (the domain) imports only shared/contract/, shared/service/ and Node: the store port lives here, adapters depend on it."),
  },
  {
    files: ["shared/members/**/*.ts"],
    rules: only(
      [SIBLING, CONTRACT, SERVICE, NODE],
      "shared/members/ (membership's domain) imports only shared/contract/, shared/service/ (clocks, budgets, admission, store call options) and Node, never leases: its store port lives here, adapters depend on it.",
    ),
  },
  {
    files: ["shared/participant/**/*.ts"],
    rules: only(
      [SIBLING, CONTRACT, SERVICE, "\\.\\./(lease|members)/", NODE],
      "shared/participant/ (one request per participant) composes the two domains: it imports shared/contract/, shared/service/, shared/lease/, shared/members/ and Node, never the layers above.",
    ),
  },
  {
    files: ["shared/config/**/*.ts"],
    rules: only([SIBLING, CONTRACT, NODE], "shared/config/ imports only shared/contract/ and Node."),
  },
  {
    files: ["shared/sdk/**/*.ts"],
    rules: only([SIBLING, CONTRACT, NODE], "shared/sdk/ imports only shared/contract/ (and Node): SDK users install none of the server."),
  },
  {
    files: ["shared/sdk/*/**/*.ts"],
    rules: only([SIBLING, "\\.\\./(?!\\.\\./)", "\\.\\./\\.\\./contract/", NODE], "shared/sdk/'s folders import only the SDK, shared/contract/ (and Node): SDK users install none of the server."),
  },
  {
    // The rooms below election/ and membership/ (docs/layout.md#the-sdk): what reaches the
    // service, how it authenticates, and the loops' plumbing never reach up into the loops.
    files: ["shared/sdk/transport/**/*.ts", "shared/sdk/auth/**/*.ts", "shared/sdk/loop/**/*.ts"],
    rules: only(
      [SIBLING, "\\.\\./(transport|auth|loop)/", "\\.\\./\\.\\./contract/", NODE],
      "shared/sdk/transport/, auth/ and loop/ import only each other, shared/contract/ (and Node): never the election, membership or fencing that stand on them.",
    ),
  },
  {
    files: ["shared/sdk/fencing/**/*.ts"],
    rules: only([SIBLING, "\\.\\./loop/", NODE], "shared/sdk/fencing/ stands alone (the user's own store clients, the epoch they are given): it imports only the option checks of loop/ (and Node)."),
  },
  {
    files: ["shared/store/**/*.ts"],
    rules: never(["\\.\\./(http|host|sdk|cli)/", "(\\.\\./)+functions/"], "shared/store/ (the adapters) may use contract/, lease/ and config/, never the layers above them."),
  },
  {
    files: ["shared/http/**/*.ts"],
    rules: never(["\\.\\./(store|host|sdk|cli)/", "(\\.\\./)+functions/"], "shared/http/ (Functions glue) takes the store through lease/'s port; it never imports adapters, the local host, the SDK, the CLI or functions/."),
  },
  {
    files: ["shared/host/**/*.ts"],
    rules: never(["\\.\\./(store|sdk|cli)/", "(\\.\\./)+functions/"], "shared/host/ is given its routes and runtime by a composition root; it never imports functions/, stores, the SDK or the CLI."),
  },
  {
    files: ["shared/cli/**/*.ts"],
    rules: never(["(\\.\\./)+functions/"], "Only the CLI's composition root (shared/cli/main.ts) imports functions/."),
  },
  {
    files: ["shared/cli/main.ts"],
    rules: { "no-restricted-imports": "off" },
  },
  {
    files: ["functions/**/*.ts"],
    rules: never(["\\.\\./shared/(host|cli|sdk)/"], "functions/ is what Azure runs: it never imports the local host, the CLI or the SDK."),
  },
];

export default tseslint.config(
  { ignores: ["dist/", "node_modules/", "coverage/", ".ha-data/"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ["**/*.ts"],
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": ["error", { fixStyle: "inline-type-imports" }],
      "no-console": "off",
    },
  },
  ...importZones,
  {
    // The dashboard's script runs in the browser (functions/dashboard-assets.ts serves it).
    files: ["functions/dashboard/**/*.js"],
    languageOptions: {
      sourceType: "module",
      globals: Object.fromEntries(
        ["window", "document", "fetch", "URL", "URLSearchParams", "AbortSignal", "DOMException", "performance"].map((name) => [name, "readonly"]),
      ),
    },
  },
);
