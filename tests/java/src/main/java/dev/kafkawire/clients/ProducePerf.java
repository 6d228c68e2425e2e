package dev.kafkawire.clients;

import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The benchmarks' Java producer (benches/fake), not a test flow: the admin
 * client creates the topic, then Kafka's producer, at its defaults but
 * acks=all (idempotent, no compression, linger.ms 5, batch.size 16 KiB),
 * sends {@code --records} records of {@code --record-size} random bytes
 * (no key: the sticky partitioner spreads them over the partitions) as fast
 * as its buffer lets it, and flushes.
 *
 * <p>Arguments: {@code --bootstrap HOST:PORT [--topic T] [--records N]
 * [--record-size BYTES] [--partitions P] [--client-prefix P]}. It prints one
 * JSON object: the records and value bytes sent, the seconds from the first
 * send to the end of the flush (every record acknowledged), and the rates
 * (MB is 10^6 bytes of values). Any failure exits 1 with the exception on
 * stderr.
 */
public final class ProducePerf {
    private ProducePerf() {}

    public static void main(String[] args) throws Exception {
        Map<String, String> options = new java.util.LinkedHashMap<>();
        options.put("--topic", "java-perf");
        options.put("--records", "100000");
        options.put("--record-size", "1024");
        options.put("--partitions", "12");
        options.put("--client-prefix", "java-perf");
        for (int i = 0; i < args.length; i += 2) {
            if (!args[i].startsWith("--") || i + 1 >= args.length) {
                System.err.println("java produce-perf: bad argument " + args[i]);
                System.exit(2);
            }
            options.put(args[i], args[i + 1]);
        }
        if (!options.containsKey("--bootstrap")) {
            System.err.println("java produce-perf: --bootstrap is required");
            System.exit(2);
        }
        try {
            System.out.println(run(options));
            System.exit(0);
        } catch (Exception e) {
            e.printStackTrace();
            System.exit(1);
        }
    }

    private static String run(Map<String, String> options) throws Exception {
        String topic = options.get("--topic");
        int records = Integer.parseInt(options.get("--records"));
        int size = Integer.parseInt(options.get("--record-size"));
        int partitions = Integer.parseInt(options.get("--partitions"));

        try (Admin admin = Admin.create(Flow.common(options, "admin"))) {
            try {
                admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1)))
                        .all().get(60, TimeUnit.SECONDS);
            } catch (java.util.concurrent.ExecutionException e) {
                if (!(e.getCause() instanceof TopicExistsException)) {
                    throw e;
                }
            }
        }

        Properties pp = Flow.common(options, "producer");
        pp.put("acks", "all");
        byte[] value = new byte[size];
        new Random(1).nextBytes(value);
        AtomicReference<Exception> failure = new AtomicReference<>();
        try (KafkaProducer<byte[], byte[]> producer =
                new KafkaProducer<>(pp, new ByteArraySerializer(), new ByteArraySerializer())) {
            // Every partition led before the clock starts.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (!led(producer.partitionsFor(topic), partitions)) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("the partitions of " + topic + " have no leaders");
                }
                Thread.sleep(100);
            }
            long start = System.nanoTime();
            for (int i = 0; i < records; i++) {
                producer.send(new ProducerRecord<>(topic, value), (meta, e) -> {
                    if (e != null) {
                        failure.compareAndSet(null, e);
                    }
                });
            }
            producer.flush();
            double seconds = (System.nanoTime() - start) / 1e9;
            if (failure.get() != null) {
                throw failure.get();
            }
            long bytes = (long) records * size;
            return String.format(java.util.Locale.ROOT,
                    "{\"mode\":\"produce-perf\",\"records\":%d,\"bytes\":%d,\"seconds\":%.3f,"
                            + "\"mbPerSecond\":%.2f,\"recordsPerSecond\":%.0f}",
                    records, bytes, seconds, bytes / 1e6 / seconds, records / seconds);
        }
    }

    private static boolean led(List<PartitionInfo> infos, int partitions) {
        return infos.size() == partitions && infos.stream().allMatch(p -> p.leader() != null);
    }
}
