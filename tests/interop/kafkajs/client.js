// Produces and consumes a spec (see ../clients/spec.py) with kafkajs 2.2.4.
//
//   node client.js produce --bootstrap HOST:PORT[,HOST:PORT...] --spec spec.json --client-id ID
//   node client.js consume --bootstrap HOST:PORT --spec spec.json --client-id ID \
//       --group GROUP --out consumed.jsonl
//
// Codecs: gzip is built into kafkajs; snappy comes from kafkajs-snappy (pure
// JavaScript), lz4 from lz4js (pure JavaScript, LZ4 frame format; see
// lz4Frame for the flag Kafka needs), zstd
// compression from @bokuweb/zstd-wasm (WebAssembly shipped in the package)
// and zstd decompression from fzstd (pure JavaScript: zstd-wasm cannot
// decompress frames without a content size, which librdkafka writes),
// registered below as kafkajs codecs.
'use strict';

const fs = require('fs');
const { Kafka, CompressionTypes, CompressionCodecs, logLevel } = require('kafkajs');
const SnappyCodec = require('kafkajs-snappy');
const lz4 = require('lz4js');
const xxh32 = require('lz4js/xxh32');
const zstd = require('@bokuweb/zstd-wasm');
const fzstd = require('fzstd');

CompressionCodecs[CompressionTypes.Snappy] = SnappyCodec;
// Kafka refuses an LZ4 frame whose header does not declare its blocks
// independent ("Dependent block stream is unsupported", answered as
// UNKNOWN_SERVER_ERROR), and lz4js never declares it. A frame of one block
// (lz4js's blocks are 4 MiB) has no earlier block to depend on, so the flag
// is set on such frames, with the header checksum recomputed; a larger
// input is refused here.
const LZ4_BLOCK_INDEPENDENCE = 0x20;
const LZ4_BLOCK_MAX = 4 << 20;
function lz4Frame(input) {
  if (input.length > LZ4_BLOCK_MAX) {
    throw new Error(`lz4: ${input.length} bytes need more than one block`);
  }
  const frame = Buffer.from(lz4.compress(input));
  // Magic (4 bytes), FLG, BD, then HC: the second byte of xxh32 of FLG and BD.
  frame[4] |= LZ4_BLOCK_INDEPENDENCE;
  frame[6] = (xxh32.hash(0, frame, 4, 2) >>> 8) & 0xff;
  return frame;
}
CompressionCodecs[CompressionTypes.LZ4] = () => ({
  compress: async (encoder) => lz4Frame(encoder.buffer),
  decompress: async (buffer) => Buffer.from(lz4.decompress(buffer)),
});
CompressionCodecs[CompressionTypes.ZSTD] = () => ({
  compress: async (encoder) => {
    await zstd.init();
    return Buffer.from(zstd.compress(encoder.buffer, 3));
  },
  decompress: async (buffer) => Buffer.from(fzstd.decompress(buffer)),
});

const CODECS = {
  none: CompressionTypes.None,
  gzip: CompressionTypes.GZIP,
  snappy: CompressionTypes.Snappy,
  lz4: CompressionTypes.LZ4,
  zstd: CompressionTypes.ZSTD,
};

function parseArgs(argv) {
  const args = { command: argv[0] };
  for (let i = 1; i < argv.length; i += 2) {
    args[argv[i].replace(/^--/, '').replace(/-./g, (m) => m[1].toUpperCase())] = argv[i + 1];
  }
  args.spec = JSON.parse(fs.readFileSync(args.spec, 'utf8'));
  return args;
}

const b64 = (buffer) => (buffer == null ? null : Buffer.from(buffer).toString('base64'));

async function produce(kafka, spec) {
  for (const topic of spec.topics) {
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    await producer.send({
      topic: topic.topic,
      acks: -1,
      compression: CODECS[topic.codec],
      messages: topic.messages.map((m) => ({
        key: m.key,
        value: m.value,
        headers: Object.fromEntries(m.headers),
        // kafkajs takes the creation time in ms as a string; null: now.
        ...(m.timestamp == null ? {} : { timestamp: String(m.timestamp) }),
      })),
    });
    await producer.disconnect();
    console.log(`kafkajs: produced ${topic.messages.length} to ${topic.topic} (${topic.codec})`);
  }
}

async function consume(kafka, args) {
  const spec = args.spec;
  const want = spec.topics.reduce((n, t) => n + t.messages.length, 0);
  const lines = [];
  const next = {};
  const consumer = kafka.consumer({ groupId: args.group, maxWaitTimeInMs: 500 });
  await consumer.connect();
  await consumer.subscribe({ topics: spec.topics.map((t) => t.topic), fromBeginning: true });
  const done = new Promise((resolve) => {
    consumer.run({
      autoCommit: false,
      eachMessage: async ({ topic, partition, message }) => {
        const headers = Object.entries(message.headers || {}).map(([k, v]) => [k, b64(v)]);
        const context = message.batchContext;
        lines.push(JSON.stringify({
          topic, partition, offset: Number(message.offset),
          key: b64(message.key), value: b64(message.value), headers,
          timestamp: Number(message.timestamp),
          create_time: context ? context.timestampType === 0 : null, // 0: CreateTime
        }));
        next[topic] = (BigInt(message.offset) + 1n).toString();
        if (lines.length >= want) resolve();
      },
    });
  });
  const timeout = new Promise((_, reject) => setTimeout(() => reject(new Error('timed out')), 45000));
  await Promise.race([done, timeout]);
  fs.writeFileSync(args.out, lines.map((l) => `${l}\n`).join(''));
  await consumer.commitOffsets(Object.entries(next).map(([topic, offset]) => ({ topic, partition: 0, offset })));
  const admin = kafka.admin();
  await admin.connect();
  // One topic per call: kafkajs resolves the topics of one call
  // concurrently, each refreshing the admin's metadata with its own subset
  // of topics, and a topic whose partitions a later refresh left out is
  // asked for with no partition at all (seen against a three-broker
  // cluster). Every topic's committed offset is still checked.
  for (const { topic, messages } of spec.topics) {
    const [{ partitions }] = await admin.fetchOffsets({ groupId: args.group, topics: [topic] });
    const offset = partitions.length > 0 ? Number(partitions[0].offset) : undefined;
    if (offset !== messages.length) {
      throw new Error(`committed offset of ${topic} is ${offset}, expected ${messages.length}`);
    }
  }
  await admin.disconnect();
  await consumer.disconnect(); // leaves the group
  console.log(`kafkajs: consumed ${lines.length} of ${want}, committed, left the group`);
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const kafka = new Kafka({
    clientId: args.clientId,
    brokers: args.bootstrap.split(","),
    logLevel: logLevel.WARN,
  });
  if (args.command === 'produce') await produce(kafka, args.spec);
  else await consume(kafka, args);
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(`kafkajs: ${e.stack || e}`);
    process.exit(1);
  },
);
