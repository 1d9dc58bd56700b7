/** What the server process hands every peer. */
export interface PeerContext {
  /** Directory holding the static scenario's file. */
  staticDir: string;
}

/** A peer starts the server for one scenario on 127.0.0.1 and resolves with its port. */
export type StartPeer = (scenario: string, ctx: PeerContext) => Promise<number>;
