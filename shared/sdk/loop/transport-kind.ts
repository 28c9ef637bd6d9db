/** The transport a kind of loop needs: how to recognise one, how to name it, where `endpoint` may come from. */
export interface TransportKind<Transport> {
  /** For the message: the interface and its calls, e.g. "LeaseTransport (getPrimary, heartbeat, release)". */
  readonly described: string;
  readonly accepts: (value: unknown) => value is Transport;
  /** The elector falls back on HA_ENDPOINT (docs/configuration.md); membership's loops do not. */
  readonly endpointFromEnvironment: boolean;
}
