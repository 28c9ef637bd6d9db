import { AZURITE_PROCESS_PATH, CLI_PATH, POSTGRES_PROCESS_PATH } from "./paths.js";
import { cleanEnv, startLogged, type LoggedProcess, type StartOptions } from "./processes.js";

const START_TIMEOUT_MS = 60_000;

export interface ServeProcess {
  readonly process: LoggedProcess;
  /** The API base, e.g. http://127.0.0.1:41631/api */
  readonly url: string;
  readonly port: number;
}

export interface ServeOptions {
  /** 0 for a free port; the port of a previous start to come back on the same address. */
  readonly port: number;
  readonly dataDir: string;
  readonly intervalMs: number;
  readonly timeoutMs: number;
  /** Azurite's connection string when the store runs as its own process; else the embedded store in `dataDir`. */
  readonly connectionString?: string;
  readonly outFile: string;
  readonly onUnexpectedExit?: StartOptions["onUnexpectedExit"];
  /** More settings, e.g. HA_STORE_TIMEOUT_MS. */
  readonly env?: Record<string, string>;
}

/** `ha-module serve`, what `npm start` runs, with a durable store; resolves once it listens. */
export async function startServe(options: ServeOptions): Promise<ServeProcess> {
  const env = cleanEnv({
    PORT: String(options.port),
    HA_DATA_DIR: options.dataDir,
    HA_INTERVAL_MS: String(options.intervalMs),
    HA_TIMEOUT_MS: String(options.timeoutMs),
    ...(options.connectionString === undefined ? {} : { HA_TABLE_CONNECTION_STRING: options.connectionString }),
    ...options.env,
  });
  let found: ((url: string) => void) | undefined;
  const listening = new Promise<string>((resolve) => (found = resolve));
  const serve = startLogged("serve", process.execPath, [CLI_PATH, "serve"], {
    env,
    outFile: options.outFile,
    ...(options.onUnexpectedExit === undefined ? {} : { onUnexpectedExit: options.onUnexpectedExit }),
    onLine: (line) => {
      const match = /listening on (http:\/\/\S+\/api)/.exec(line);
      if (match !== null) found?.(match[1]!);
    },
  });
  const url = await ready(serve, listening);
  return { process: serve, url, port: Number(new URL(url).port) };
}

export interface StoreProcess {
  readonly process: LoggedProcess;
  readonly connectionString: string;
  readonly port: number;
}

/** Azurite as its own process (azurite-process.ts) on `dataDir`; resolves once it listens. */
export async function startStoreProcess(
  dataDir: string,
  port: number,
  outFile: string,
  onUnexpectedExit?: StartOptions["onUnexpectedExit"],
): Promise<StoreProcess> {
  let found: ((answer: { connectionString: string; port: number }) => void) | undefined;
  const listening = new Promise<{ connectionString: string; port: number }>((resolve) => (found = resolve));
  const store = startLogged("azurite", process.execPath, [AZURITE_PROCESS_PATH, dataDir, String(port)], {
    env: cleanEnv({}),
    outFile,
    ...(onUnexpectedExit === undefined ? {} : { onUnexpectedExit }),
    onLine: (line) => {
      if (line.startsWith("{")) found?.(JSON.parse(line) as { connectionString: string; port: number });
    },
  });
  const answer = await ready(store, listening);
  return { process: store, ...answer };
}

export interface PostgresProcess {
  /** postgres-process.ts; the server's keeper, postmaster and backends are its descendants. */
  readonly process: LoggedProcess;
  /** HA_POSTGRES_URL: postgres://postgres:<password>@127.0.0.1:<port>/postgres */
  readonly url: string;
  readonly port: number;
}

/** PostgreSQL as its own process (postgres-process.ts) on `dataDir`; resolves once it accepts connections. */
export async function startPostgresProcess(
  dataDir: string,
  port: number,
  outFile: string,
  onUnexpectedExit?: StartOptions["onUnexpectedExit"],
): Promise<PostgresProcess> {
  let found: ((answer: { url: string; port: number }) => void) | undefined;
  const listening = new Promise<{ url: string; port: number }>((resolve) => (found = resolve));
  const store = startLogged("postgres", process.execPath, [POSTGRES_PROCESS_PATH, dataDir, String(port)], {
    env: cleanEnv({}),
    outFile,
    ...(onUnexpectedExit === undefined ? {} : { onUnexpectedExit }),
    onLine: (line) => {
      if (line.startsWith("{")) found?.(JSON.parse(line) as { url: string; port: number });
    },
  });
  const answer = await ready(store, listening);
  return { process: store, ...answer };
}

/** The value, or an error with the process's output if it exits or stays silent first. */
async function ready<T>(child: LoggedProcess, value: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const failed = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      child.signal("SIGKILL");
      reject(new Error(`${child.name} did not start within ${START_TIMEOUT_MS} ms:${child.tail()}`));
    }, START_TIMEOUT_MS);
    void child.exited.then(({ code, signal }) => reject(new Error(`${child.name} exited (${signal ?? code}) before it was ready:${child.tail()}`)));
  });
  failed.catch(() => undefined); // it rejects too when the process exits long after it was ready
  try {
    return await Promise.race([value, failed]);
  } finally {
    clearTimeout(timer);
  }
}
