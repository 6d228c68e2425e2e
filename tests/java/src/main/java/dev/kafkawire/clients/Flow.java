package dev.kafkawire.clients;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The Java client's side of the real-client tests: one flow of Kafka's own
 * clients (kafka-clients, the version the pom pins) against one bootstrap
 * address: the fake cluster, real Kafka, or kafka-protocol proxy in front of
 * either.
 *
 * <ol>
 *   <li>The admin client describes the cluster and creates the topic.</li>
 *   <li>An idempotent producer (acks=all, zstd) writes records with keys,
 *       values, a header and a timestamp.</li>
 *   <li>A consumer in a group reads them back from the start, commits
 *       synchronously, reads its committed offset and closes, which leaves
 *       the group.</li>
 *   <li>The admin client deletes the topic and sees it gone.</li>
 * </ol>
 *
 * <p>Arguments: {@code --bootstrap HOST:PORT [--topic T] [--group G]
 * [--records N] [--client-prefix P] [--group-protocol classic|consumer]
 * [--sasl-mechanism M --sasl-user U --sasl-password PW] [--mode basic|transactions|admin|share]};
 * {@code --mode transactions} runs {@link Transactions} instead, {@code --mode admin}
 * {@link AdminFlow}, {@code --mode share} {@link ShareFlow}; {@code consumer}
 * is KIP-848's protocol (ConsumerGroupHeartbeat), classic the default. It prints one JSON object: what it produced,
 * consumed and found committed, the nodes DescribeCluster and Metadata
 * advertised, and per client id the responses it received (the clients'
 * {@code response-total} metric, read after close). Any failure exits 1
 * with the exception on stderr.
 */
public final class Flow {
    private Flow() {}

    public static void main(String[] args) throws Exception {
        Map<String, String> options = new LinkedHashMap<>();
        options.put("--topic", "java-flow");
        options.put("--group", "java-flow-group");
        options.put("--records", "20");
        options.put("--client-prefix", "java");
        for (int i = 0; i < args.length; i += 2) {
            if (!args[i].startsWith("--") || i + 1 >= args.length) {
                System.err.println("java flow: bad argument " + args[i]);
                System.exit(2);
            }
            options.put(args[i], args[i + 1]);
        }
        if (!options.containsKey("--bootstrap")) {
            System.err.println("java flow: --bootstrap is required");
            System.exit(2);
        }
        try {
            String mode = options.getOrDefault("--mode", "basic");
            String out = switch (mode) {
                case "transactions" -> Transactions.run(options);
                case "admin" -> AdminFlow.run(options);
                case "share" -> ShareFlow.run(options);
                default -> run(options);
            };
            System.out.println(out);
            System.exit(0);
        } catch (Exception e) {
            e.printStackTrace();
            System.exit(1);
        }
    }

    /** The settings every client shares, for a client id. */
    static Properties common(Map<String, String> options, String role) {
        Properties p = new Properties();
        p.put("bootstrap.servers", options.get("--bootstrap"));
        p.put("client.id", options.get("--client-prefix") + "-" + role);
        p.put("request.timeout.ms", "30000");
        p.put("default.api.timeout.ms", "60000");
        String mechanism = options.get("--sasl-mechanism");
        if (mechanism != null) {
            String module = mechanism.equals("PLAIN")
                    ? "org.apache.kafka.common.security.plain.PlainLoginModule"
                    : "org.apache.kafka.common.security.scram.ScramLoginModule";
            p.put("security.protocol", "SASL_PLAINTEXT");
            p.put("sasl.mechanism", mechanism);
            p.put("sasl.jaas.config", module + " required username=\"" + options.get("--sasl-user")
                    + "\" password=\"" + options.get("--sasl-password") + "\";");
        }
        return p;
    }

    /** The client's cumulative count of responses received. */
    static Metric responses(Map<MetricName, ? extends Metric> metrics) {
        for (Map.Entry<MetricName, ? extends Metric> e : metrics.entrySet()) {
            MetricName name = e.getKey();
            if (name.name().equals("response-total") && name.group().endsWith("-metrics")
                    && name.tags().keySet().equals(Set.of("client-id"))) {
                return e.getValue();
            }
        }
        throw new IllegalStateException("no response-total metric");
    }

    private static String address(Node node) {
        return node.host() + ":" + node.port();
    }

    private static String run(Map<String, String> options) throws Exception {
        String topic = options.get("--topic");
        String group = options.get("--group");
        int records = Integer.parseInt(options.get("--records"));
        String prefix = options.get("--client-prefix");
        // Record i's timestamp: an hour ago plus i milliseconds.
        long base = System.currentTimeMillis() - 3_600_000L;
        Map<String, Metric> counters = new LinkedHashMap<>();
        Set<String> advertised = new TreeSet<>();
        Set<String> leaders = new TreeSet<>();
        int produced = 0;
        int consumed = 0;
        long committed = -1;
        String clusterId;

        try (Admin admin = Admin.create(common(options, "admin"))) {
            counters.put(prefix + "-admin", responses(admin.metrics()));
            DescribeClusterResult cluster = admin.describeCluster();
            clusterId = cluster.clusterId().get(60, TimeUnit.SECONDS);
            for (Node node : cluster.nodes().get(60, TimeUnit.SECONDS)) {
                advertised.add(address(node));
            }
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get(60, TimeUnit.SECONDS);
            waitForTopic(admin, topic, true);

            Properties pp = common(options, "producer");
            pp.put("acks", "all");
            pp.put("enable.idempotence", "true");
            pp.put("compression.type", "zstd");
            pp.put("linger.ms", "0");
            try (KafkaProducer<byte[], byte[]> producer =
                    new KafkaProducer<>(pp, new ByteArraySerializer(), new ByteArraySerializer())) {
                counters.put(prefix + "-producer", responses(producer.metrics()));
                for (int i = 0; i < records; i++) {
                    ProducerRecord<byte[], byte[]> record = new ProducerRecord<>(topic, 0, base + i,
                            bytes("key-" + i), bytes("value-" + i));
                    record.headers().add("index", bytes(Integer.toString(i)));
                    RecordMetadata meta = producer.send(record).get(60, TimeUnit.SECONDS);
                    if (meta.offset() != i) {
                        throw new IllegalStateException("record " + i + " written at offset " + meta.offset());
                    }
                    produced++;
                }
                producer.flush();
                for (PartitionInfo partition : producer.partitionsFor(topic)) {
                    leaders.add(address(partition.leader()));
                }
            }

            Properties cp = common(options, "consumer");
            cp.put("group.id", group);
            cp.put("auto.offset.reset", "earliest");
            cp.put("enable.auto.commit", "false");
            if (options.containsKey("--group-protocol")) {
                cp.put("group.protocol", options.get("--group-protocol"));
            }
            TopicPartition partition = new TopicPartition(topic, 0);
            try (KafkaConsumer<byte[], byte[]> consumer =
                    new KafkaConsumer<>(cp, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
                counters.put(prefix + "-consumer", responses(consumer.metrics()));
                consumer.subscribe(List.of(topic));
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
                while (consumed < records) {
                    if (System.nanoTime() > deadline) {
                        throw new IllegalStateException("consumed " + consumed + " of " + records);
                    }
                    for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(500))) {
                        long i = r.offset();
                        String got = string(r.key()) + "/" + string(r.value());
                        for (Header h : r.headers()) {
                            got += "/" + h.key() + "=" + string(h.value());
                        }
                        got += "@" + r.timestamp();
                        String want = "key-" + i + "/value-" + i + "/index=" + i + "@" + (base + i);
                        if (!got.equals(want)) {
                            throw new IllegalStateException("offset " + i + ": got " + got + ", want " + want);
                        }
                        consumed++;
                    }
                }
                consumer.commitSync();
                OffsetAndMetadata offset = consumer.committed(Set.of(partition)).get(partition);
                committed = offset == null ? -1 : offset.offset();
            }

            admin.deleteTopics(List.of(topic)).all().get(60, TimeUnit.SECONDS);
            waitForTopic(admin, topic, false);
        }

        StringBuilder json = new StringBuilder("{");
        json.append("\"clusterId\":\"").append(clusterId).append("\",");
        json.append("\"produced\":").append(produced).append(',');
        json.append("\"consumed\":").append(consumed).append(',');
        json.append("\"committed\":").append(committed).append(',');
        json.append("\"advertised\":").append(array(advertised)).append(',');
        json.append("\"leaders\":").append(array(leaders)).append(',');
        json.append("\"responses\":{");
        List<String> counts = new ArrayList<>();
        for (Map.Entry<String, Metric> e : counters.entrySet()) {
            long n = Math.round(((Number) e.getValue().metricValue()).doubleValue());
            counts.add("\"" + e.getKey() + "\":" + n);
        }
        json.append(String.join(",", counts)).append("}}");
        return json.toString();
    }

    /** Waits until the topic is listed (or no longer is): a real broker applies metadata asynchronously. */
    static void waitForTopic(Admin admin, String topic, boolean present) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (admin.listTopics().names().get(60, TimeUnit.SECONDS).contains(topic) != present) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("topic " + topic + (present ? " never listed" : " still listed"));
            }
            Thread.sleep(100);
        }
    }

    private static String array(Set<String> items) {
        List<String> quoted = new ArrayList<>();
        for (String item : items) {
            quoted.add("\"" + item + "\"");
        }
        return "[" + String.join(",", quoted) + "]";
    }

    static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    static String string(byte[] b) {
        return b == null ? "null" : new String(b, StandardCharsets.UTF_8);
    }
}
