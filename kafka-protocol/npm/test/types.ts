// The package's types, checked with `tsc --noEmit --strict`.
import { startFakeCluster, ControlError, FakeClusterError, type FakeCluster, type FaultCounts } from 'kafka-wire';

async function example(): Promise<FaultCounts> {
  const cluster: FakeCluster = await startFakeCluster({
    brokers: 3,
    topics: { orders: 6 },
    faults: ['every=500ms:move-leaders'],
    seed: 7,
    sasl: [{ mechanism: 'PLAIN', username: 'alice', password: 'secret' }],
  });
  const bootstrap: string = cluster.bootstrap;
  const id: number | undefined = await cluster.fault('produce:error=NOT_LEADER_OR_FOLLOWER:times=1');
  const answer = await cluster.control('move-leader', { topic: 'orders', partition: 0 });
  const epoch: number = answer.leader_epoch;
  const counts: FaultCounts = await cluster.injected();
  const errorCount: number | undefined = counts['error'];
  void [bootstrap, id, epoch, errorCount];
  try {
    await cluster.control({ cmd: 'stop-broker', broker: 9 });
  } catch (e) {
    if (e instanceof ControlError) console.log(e.message, e.command.cmd);
    else if (e instanceof FakeClusterError) console.log(e.exitCode, e.stderr);
  }
  return cluster.stop();
}
void example;
