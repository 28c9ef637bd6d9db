export const USAGE = `Usage: ha-module <command> [options]

Commands:
  serve                              run the lease service locally (the same as npm start)
  primary [utype]                    print GetPrimary of utype as JSON; every live primary without one
  elect <utype> [--address A]        join the election; print one JSON line per event
  run <utype> [--address A] [--check-port P] [--grace-ms G] -- <command> [args…]
                                     run the command (a process group of its own) only while
                                     primary; once the lease has only G ms left, SIGTERM the group,
                                     SIGKILL it at the deadline; keep competing. G must be below
                                     T − 2·I (default (T − 2·I)/2). Events on stdout, the command's
                                     output on stderr; HA_UTYPE, HA_UUID, HA_EPOCH, HA_CHECK_URL set
  members [group] [--json | --watch] the group's members and their states as a table (every group's
                                     counts without a group), or JSON; --watch prints one JSON line
                                     per state change: memberJoined, memberActive,
                                     memberUnreachable, memberLeaving, memberRemoved
  join <group> --member NAME [--address A]
                                     be a member of the group: heartbeat every I, print joined/lost
                                     as JSON lines; on SIGTERM or SIGINT say goodbye and exit 0

Options for primary, elect, run, members and join:
  --endpoint URL   the service's base URL (env HA_ENDPOINT, default http://127.0.0.1:7071/api)
  --key KEY        the function key, sent in x-functions-key (env HA_API_KEY)
  --address A      where this participant can be reached, shown to everyone by GetPrimary
  --check-port P   serve GET /check-primary on 127.0.0.1:P: 200 {"isPrimary":true,"epoch":…}
                   or 503 {"isPrimary":false} (0 picks a free port; run always serves it, on
                   a free port without P, and prints the URL on stderr)
`;

/** A command line that cannot be run: the CLI prints the message and the usage, and exits 2. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}
