package dev.kafkawire.reference;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.Future;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * Kafka's Java clients against a real broker, for kafka-wire's data tests: what the Java
 * producer writes, kafka-wire fetches and decodes; what kafka-wire writes, the Java consumer
 * reads.
 *
 * <pre>
 * produce BOOTSTRAP TOPIC OUT        per codec (none, gzip, snappy, lz4, zstd) an idempotent
 *                                    producer sends 3 records in one batch; then a transactional
 *                                    producer commits 2 records (zstd) and aborts 1 (gzip). One
 *                                    JSON line per record sent, with its offset.
 * consume BOOTSTRAP TOPIC COUNT OUT  a read_committed consumer reads every partition of TOPIC
 *                                    from the start until it has COUNT records (60 s at most).
 *                                    One JSON line per record.
 * </pre>
 *
 * A record line: {@code {"codec", "committed", "partition", "offset", "timestamp", "key",
 * "value", "headers": [{"key", "value"}]}}, bytes in base64, {@code codec} and {@code
 * committed} only from produce.
 */
public final class ClientData {
    private ClientData() {}

    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final Base64.Encoder B64 = Base64.getEncoder();
    private static final String[] CODECS = {"none", "gzip", "snappy", "lz4", "zstd"};

    public static void main(String[] args) throws Exception {
        if (args.length == 4 && args[0].equals("produce")) {
            produce(args[1], args[2], Path.of(args[3]));
        } else if (args.length == 5 && args[0].equals("consume")) {
            consume(args[1], args[2], Integer.parseInt(args[3]), Path.of(args[4]));
        } else {
            System.err.println("usage: produce BOOTSTRAP TOPIC OUT | consume BOOTSTRAP TOPIC COUNT OUT");
            System.exit(2);
        }
    }

    private static Properties producerConfig(String bootstrap, String codec) {
        Properties config = new Properties();
        config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        config.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        config.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        config.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, codec);
        config.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        config.put(ProducerConfig.ACKS_CONFIG, "all");
        // All of one producer's records in one batch.
        config.put(ProducerConfig.LINGER_MS_CONFIG, 1000);
        config.put(ProducerConfig.CLIENT_ID_CONFIG, "java-producer-" + codec);
        return config;
    }

    private record Sent(String codec, boolean committed, ProducerRecord<byte[], byte[]> record,
            Future<RecordMetadata> metadata) {}

    private static ProducerRecord<byte[], byte[]> record(String topic, String codec, int i) {
        byte[] key = ("java-" + codec + "-" + i).getBytes(StandardCharsets.UTF_8);
        byte[] value = ("written by the Java producer with " + codec + ", record " + i + " ")
                .repeat(10).getBytes(StandardCharsets.UTF_8);
        List<Header> headers = List.of(
                new RecordHeader("codec", codec.getBytes(StandardCharsets.UTF_8)),
                new RecordHeader("empty", new byte[0]),
                new RecordHeader("null", null));
        return new ProducerRecord<>(topic, 0, 1_700_000_100_000L + i, key, value, headers);
    }

    private static void produce(String bootstrap, String topic, Path out) throws Exception {
        List<Sent> sent = new ArrayList<>();
        for (String codec : CODECS) {
            try (KafkaProducer<byte[], byte[]> producer =
                    new KafkaProducer<>(producerConfig(bootstrap, codec))) {
                for (int i = 0; i < 3; i++) {
                    ProducerRecord<byte[], byte[]> record = record(topic, codec, i);
                    sent.add(new Sent(codec, true, record, producer.send(record)));
                }
                producer.flush();
            }
        }
        Properties config = producerConfig(bootstrap, "zstd");
        config.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "java-data-txn");
        config.put(ProducerConfig.CLIENT_ID_CONFIG, "java-producer-txn");
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(config)) {
            producer.initTransactions();
            producer.beginTransaction();
            for (int i = 10; i < 12; i++) {
                ProducerRecord<byte[], byte[]> record = record(topic, "zstd", i);
                sent.add(new Sent("zstd", true, record, producer.send(record)));
            }
            producer.commitTransaction();
            producer.beginTransaction();
            ProducerRecord<byte[], byte[]> aborted = record(topic, "zstd", 20);
            sent.add(new Sent("zstd", false, aborted, producer.send(aborted)));
            producer.flush();
            producer.abortTransaction();
        }
        try (BufferedWriter writer = Files.newBufferedWriter(out, StandardCharsets.UTF_8)) {
            for (Sent s : sent) {
                RecordMetadata metadata = s.metadata().get();
                ObjectNode line = describe(s.record().partition(), metadata.offset(),
                        s.record().timestamp(), s.record().key(), s.record().value(),
                        s.record().headers());
                line.put("codec", s.codec());
                line.put("committed", s.committed());
                writer.write(MAPPER.writeValueAsString(line));
                writer.newLine();
            }
        }
    }

    private static void consume(String bootstrap, String topic, int count, Path out)
            throws Exception {
        Properties config = new Properties();
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        config.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        config.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        config.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        config.put(ConsumerConfig.CLIENT_ID_CONFIG, "java-consumer");
        List<ConsumerRecord<byte[], byte[]>> read = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(config)) {
            List<TopicPartition> partitions = new ArrayList<>();
            for (PartitionInfo info : consumer.partitionsFor(topic, Duration.ofSeconds(30))) {
                partitions.add(new TopicPartition(topic, info.partition()));
            }
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (read.size() < count && System.nanoTime() < deadline) {
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(200))) {
                    read.add(record);
                }
            }
        }
        try (BufferedWriter writer = Files.newBufferedWriter(out, StandardCharsets.UTF_8)) {
            for (ConsumerRecord<byte[], byte[]> r : read) {
                writer.write(MAPPER.writeValueAsString(
                        describe(r.partition(), r.offset(), r.timestamp(), r.key(), r.value(),
                                r.headers())));
                writer.newLine();
            }
        }
    }

    private static ObjectNode describe(int partition, long offset, long timestamp, byte[] key,
            byte[] value, Iterable<Header> headers) {
        ObjectNode line = MAPPER.createObjectNode();
        line.put("partition", partition);
        line.put("offset", offset);
        line.put("timestamp", timestamp);
        putBytes(line, "key", key);
        putBytes(line, "value", value);
        ArrayNode list = line.putArray("headers");
        for (Header header : headers) {
            ObjectNode h = list.addObject();
            h.put("key", header.key());
            putBytes(h, "value", header.value());
        }
        return line;
    }

    private static void putBytes(ObjectNode node, String key, byte[] bytes) {
        if (bytes == null) {
            node.putNull(key);
        } else {
            node.put(key, B64.encodeToString(bytes));
        }
    }
}
