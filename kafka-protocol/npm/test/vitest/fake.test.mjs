// kafka-wire under Vitest (ES modules): a cluster per file, a fault from a test.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { Kafka, logLevel, Partitioners } from 'kafkajs';
import { startFakeCluster } from 'kafka-wire';

let cluster;
beforeAll(async () => {
  cluster = await startFakeCluster({ brokers: 1, topics: { vitest: 2 } });
});
afterAll(() => cluster.stop());

test('an injected TOPIC_AUTHORIZATION_FAILED reaches kafkajs', async () => {
  await cluster.fault('produce:error=TOPIC_AUTHORIZATION_FAILED:times=1');
  const kafka = new Kafka({ brokers: cluster.brokers, logLevel: logLevel.NOTHING });
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner, retry: { retries: 0 } });
  await producer.connect();
  await expect(producer.send({ topic: 'vitest', messages: [{ value: 'x' }] })).rejects.toThrow();
  await producer.send({ topic: 'vitest', messages: [{ value: 'y' }] });
  await producer.disconnect();
  expect((await cluster.injected()).error).toBe(1);
});
