// kafka-wire with kafkajs under node:test: 1,000 records there and back,
// an injected error failing a producer that does not retry, control
// commands and the CLI's errors. Run from a directory that installed the
// packed tarballs alone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Kafka, logLevel, Partitioners } from 'kafkajs';
import { startFakeCluster, FakeClusterError, ControlError } from 'kafka-wire';

const RECORDS = 1000;

function client(cluster) {
  return new Kafka({ clientId: 'kafka-wire-example', brokers: cluster.brokers, logLevel: logLevel.NOTHING });
}

/** The `type`s and `code`s along an error's causes. */
function causes(error) {
  const found = [];
  for (let e = error; e; e = e.cause ?? e.originalError) {
    found.push({ name: e.name, type: e.type, code: e.code });
    if (found.length > 10) break;
  }
  return found;
}

test('a thousand records produced come back, in order per partition', async (t) => {
  const cluster = await startFakeCluster({ brokers: 3, topics: { orders: 6 } });
  t.after(() => cluster.stop());
  const kafka = client(cluster);
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  for (let start = 0; start < RECORDS; start += 100) {
    const messages = [];
    for (let i = start; i < start + 100; i++) messages.push({ key: `key-${i % 60}`, value: `order ${i}` });
    await producer.send({ topic: 'orders', acks: -1, messages });
  }
  await producer.disconnect();

  const consumer = kafka.consumer({ groupId: 'readers' });
  await consumer.connect();
  await consumer.subscribe({ topic: 'orders', fromBeginning: true });
  const records = [];
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`read ${records.length} of ${RECORDS}`)), 60000);
    consumer
      .run({
        eachMessage: async ({ partition, message }) => {
          records.push({ partition, offset: Number(message.offset), key: message.key.toString(), value: message.value.toString() });
          if (records.length === RECORDS) {
            clearTimeout(timer);
            resolve();
          }
        },
      })
      .catch(reject);
  });
  await consumer.disconnect();

  assert.deepEqual(
    records.map((r) => r.value).sort(),
    Array.from({ length: RECORDS }, (_, i) => `order ${i}`).sort(),
  );
  const offsets = new Map();
  const partitionOfKey = new Map();
  for (const r of records) {
    if (!offsets.has(r.partition)) offsets.set(r.partition, []);
    offsets.get(r.partition).push(r.offset);
    if (!partitionOfKey.has(r.key)) partitionOfKey.set(r.key, r.partition);
    assert.equal(partitionOfKey.get(r.key), r.partition);
  }
  assert.ok(offsets.size > 1);
  for (const list of offsets.values()) assert.deepEqual(list, list.map((_, i) => i));
  assert.equal((await cluster.injected()).error, 0);
});

test('an injected error fails a producer that does not retry, with its code', async (t) => {
  const cluster = await startFakeCluster({ brokers: 3, topics: { orders: 6 } });
  t.after(() => cluster.stop());
  // A retriable error: a producer that retries would go through.
  const control = await cluster.fault('produce:error=NOT_ENOUGH_REPLICAS:times=1');
  assert.equal(typeof control, 'number');
  const producer = client(cluster).producer({
    createPartitioner: Partitioners.DefaultPartitioner,
    retry: { retries: 0 },
  });
  await producer.connect();
  const error = await producer.send({ topic: 'orders', acks: -1, messages: [{ value: 'first' }] }).then(
    () => null,
    (e) => e,
  );
  assert.ok(error, 'the send succeeded');
  const chain = causes(error);
  assert.ok(
    chain.some((c) => c.type === 'NOT_ENOUGH_REPLICAS' && c.code === 19),
    JSON.stringify(chain),
  );
  assert.equal((await cluster.injected()).error, 1);
  // The fault fired its one time: the next send goes through.
  await producer.send({ topic: 'orders', acks: -1, messages: [{ value: 'second' }] });
  await producer.disconnect();
  assert.equal((await cluster.stop()).error, 1);
});

test('control commands, and the CLI\'s errors as exceptions', async (t) => {
  await assert.rejects(startFakeCluster({ brokers: 0 }), (e) => {
    assert.ok(e instanceof FakeClusterError);
    assert.match(e.message, /the number of brokers is 1 to 64, not `0`/);
    assert.equal(e.exitCode, 2);
    return true;
  });
  await assert.rejects(startFakeCluster({ faults: ['produce:error=NO_SUCH_ERROR'] }), /fault `produce:error=NO_SUCH_ERROR`/);

  const cluster = await startFakeCluster({ brokers: 2, topics: ['moves:1'], seed: 7 });
  t.after(() => cluster.stop());
  assert.equal(cluster.brokers.length, 2);
  const before = await cluster.control({ cmd: 'leader', topic: 'moves', partition: 0 });
  const moved = await cluster.control('move-leader', { topic: 'moves', partition: 0 });
  assert.notEqual(moved.leader, before.leader);
  assert.equal(moved.leader_epoch, before.leader_epoch + 1);
  await assert.rejects(cluster.control('no-such-command'), (e) => {
    assert.ok(e instanceof ControlError);
    assert.equal(e.message, 'unknown command `no-such-command`');
    return true;
  });
  // Commands sent at once are answered each in turn.
  const answers = await Promise.all([0, 0, 0].map(() => cluster.control('leader', { topic: 'moves', partition: 0 })));
  assert.deepEqual(answers.map((a) => a.leader_epoch), [1, 1, 1]);
  const counts = await cluster.stop();
  assert.deepEqual(Object.keys(counts).slice(0, 2), ['error', 'delay']);
  assert.deepEqual(await cluster.stop(), counts);
  await assert.rejects(cluster.injected(), FakeClusterError);
});
