/**
 * kafka-wire: a fake Kafka cluster for tests (`kafka-protocol fake`).
 *
 * ```ts
 * import { startFakeCluster } from 'kafka-wire';
 * const cluster = await startFakeCluster({ brokers: 3, topics: { orders: 6 } });
 * // ... new Kafka({ brokers: cluster.bootstrap.split(',') }) ...
 * await cluster.stop();
 * ```
 */

/** A SASL user: `"MECHANISM:USER:PASSWORD"` or its parts. */
export type SaslUser =
  | string
  | { mechanism: 'PLAIN' | 'SCRAM-SHA-256' | 'SCRAM-SHA-512'; username: string; password: string };

export interface FakeClusterOptions {
  /** Brokers, node ids 0 to N-1 (1 to 64; default 3). */
  brokers?: number;
  /** Seed topics: `{ orders: 6 }` or `["orders:6"]`. Others are created on first use. */
  topics?: Record<string, number> | readonly string[];
  /** `--fault` specs applied from the start, e.g. `"produce:error=NOT_LEADER_OR_FOLLOWER:rate=0.05"`. */
  faults?: string | readonly string[];
  /** Seeds every random choice of the faults (default 0). */
  seed?: number;
  /** SASL users; with any, every listener requires SASL. */
  sasl?: SaslUser | readonly SaslUser[];
  /** The host every broker listens on (default 127.0.0.1). */
  host?: string;
  /** Partitions of topics created on first use (default 1). */
  defaultPartitions?: number;
  /** Create unknown topics on Metadata (default true). */
  autoCreate?: boolean;
  /**
   * Refuse an idempotent producer's first batch on a partition that has
   * never held a record unless it starts at sequence 0, as Kafka 4.5 does
   * (default false: any, as Kafka 4.4.0; KAFKA-15591).
   */
  firstSequenceFromZero?: boolean;
  /** More arguments of `kafka-protocol fake`, as they are. */
  args?: readonly string[];
  /** How long to wait for every broker to listen (default 30000). */
  startTimeoutMs?: number;
  /** How long to wait for a control command's answer (default 30000). */
  controlTimeoutMs?: number;
  /** Another `kafka-protocol` binary (default: this platform's package's, or `KAFKA_WIRE_BINARY`). */
  binary?: string;
}

/**
 * The faults injected, by kind: `error`, `delay`, `hang`, `drop-before`,
 * `drop-after`, `move-leaders`, `move-coordinator`, `stop-broker`,
 * `restart-broker`, and `drop-after-records` (the records of Produce
 * requests that took effect and whose answers were dropped).
 */
export type FaultCounts = Record<string, number>;

/** A control command of `kafka-protocol fake --control`. */
export interface ControlCommand {
  /** `fault`, `remove`, `clear`, `move-leader`, `shuffle-leaders`, `move-coordinator`, `stop-broker`, `start-broker`, `restart-broker`, `remove-broker`, `add-broker`, `rtt`, `cap-version`, `record`, `recorded`, `leader`, `seed`, `counts`. */
  cmd: string;
  [field: string]: unknown;
}

export interface FakeCluster {
  /** `host:port,...` of every broker. */
  readonly bootstrap: string;
  /** Every broker's `host:port`, in node-id order (for kafkajs's `brokers`). */
  readonly brokers: string[];
  /** The process id of `kafka-protocol fake`. */
  readonly pid: number;
  /** Injects a fault from now on; a request fault's control id (for `control('remove', { control: id })`). */
  fault(spec: string): Promise<number | undefined>;
  /** Sends a control command; its answer's fields. A refused command rejects with a `ControlError`. */
  control(command: string | ControlCommand, fields?: Record<string, unknown>): Promise<Record<string, any>>;
  /** The faults injected so far. */
  injected(): Promise<FaultCounts>;
  /** Stops the cluster (again: the same counts); the faults it injected. */
  stop(options?: { timeoutMs?: number }): Promise<FaultCounts>;
}

/** Starts a fake Kafka cluster; resolves once every broker listens. */
export function startFakeCluster(options?: FakeClusterOptions): Promise<FakeCluster>;

/** The path of this platform's `kafka-protocol` binary. */
export function binaryPath(): string;

/** The counts of a `faults error=2,delay=0,...` line. */
export function parseFaultCounts(line: string): FaultCounts;

/** The platforms with a package, as `${process.platform}-${process.arch}`. */
export const PLATFORMS: readonly string[];

/** `kafka-protocol fake` refused its settings, could not start, or ended; the message is its own. */
export class FakeClusterError extends Error {
  /** Its exit status, when it has exited. */
  readonly exitCode: number | null;
  /** The end of its standard error. */
  readonly stderr: string;
}

/** A control command was refused; the message is the cluster's answer. */
export class ControlError extends FakeClusterError {
  readonly command: ControlCommand;
}

declare const kafkaWire: {
  startFakeCluster: typeof startFakeCluster;
  binaryPath: typeof binaryPath;
  parseFaultCounts: typeof parseFaultCounts;
  PLATFORMS: typeof PLATFORMS;
  FakeClusterError: typeof FakeClusterError;
  ControlError: typeof ControlError;
};
export default kafkaWire;
