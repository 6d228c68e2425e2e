// kafka-wire under Jest (CommonJS): a cluster per file, records there and back.
const { Kafka, logLevel, Partitioners } = require('kafkajs');
const { startFakeCluster } = require('kafka-wire');

let cluster;
beforeAll(async () => {
  cluster = await startFakeCluster({ brokers: 1, topics: { jest: 2 } });
});
afterAll(() => cluster.stop());

test('kafkajs produces to and reads from the fake cluster', async () => {
  const kafka = new Kafka({ brokers: cluster.brokers, logLevel: logLevel.NOTHING });
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  await producer.send({ topic: 'jest', messages: [{ key: 'a', value: 'one' }, { key: 'b', value: 'two' }] });
  await producer.disconnect();
  const admin = kafka.admin();
  await admin.connect();
  const offsets = await admin.fetchTopicOffsets('jest');
  await admin.disconnect();
  expect(offsets.reduce((sum, p) => sum + Number(p.high), 0)).toBe(2);
  expect(await cluster.injected()).toMatchObject({ error: 0 });
});
