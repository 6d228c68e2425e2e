package dev.kafkawire.streams;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.kstream.JoinWindows;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.StreamJoined;

/**
 * A Kafka Streams application written for the tests: a word count and a
 * windowed stream-stream join, with {@code processing.guarantee=exactly_once_v2},
 * under the classic group protocol and the streams group protocol (KIP-1071)
 * at once, one {@link KafkaStreams} instance each (two stream threads, so two
 * members each), against one bootstrap address.
 *
 * <p>Commands, each with {@code --bootstrap HOST:PORT --prefix P}:
 * <ul>
 *   <li>{@code prepare}: creates the input topics and one pair of output
 *       topics per protocol, and writes the {@link Workload} with an
 *       idempotent producer. Prints {@code {"prepared": N}}.</li>
 *   <li>{@code run --state-dir DIR [--protocols classic,streams]
 *       [--throttle-ms MS] [--until killed|done] [--timeout-s S]}: runs the
 *       applications. Every 100 ms it prints
 *       {@code {"progress": {"classic": N, "streams": M}}}, the input records
 *       each has processed (each sleeps {@code --throttle-ms} per record, so
 *       that a run lasts long enough to be killed in its middle). With
 *       {@code --until killed} (the first run) it runs until the test kills
 *       the JVM with SIGKILL; with {@code --until done} (the run after the
 *       kill) it reads each application's output topics {@code read_committed}
 *       until they hold as many records as the workload makes, and a moment
 *       longer, closes the applications and prints one line
 *       {@code {"done": {PROTOCOL: {"counts": {WORD: [COUNT, ...]},
 *       "joined": ["KEY:LEFT+RIGHT", ...]}}, "seconds": {...}}}: every word's
 *       counts in output order, and the joined records sorted.</li>
 * </ul>
 * Any failure exits 1 with the exception on stderr.
 */
public final class Main {
    private Main() {}

    public static void main(String[] args) {
        try {
            Map<String, String> options = options(Arrays.copyOfRange(args, 1, args.length));
            switch (args.length == 0 ? "" : args[0]) {
                case "prepare" -> prepare(options);
                case "run" -> run(options);
                default -> throw new IllegalArgumentException("usage: prepare|run --bootstrap B --prefix P ...");
            }
            System.out.flush();
            System.exit(0);
        } catch (Throwable e) {
            e.printStackTrace();
            System.exit(1);
        }
    }

    private static Map<String, String> options(String[] args) {
        Map<String, String> options = new HashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            options.put(args[i], args[i + 1]);
        }
        return options;
    }

    private static String required(Map<String, String> options, String name) {
        String value = options.get(name);
        if (value == null) {
            throw new IllegalArgumentException("missing " + name);
        }
        return value;
    }

    private static void prepare(Map<String, String> options) throws Exception {
        String bootstrap = required(options, "--bootstrap");
        String prefix = required(options, "--prefix");
        Properties admin = new Properties();
        admin.put("bootstrap.servers", bootstrap);
        try (Admin client = Admin.create(admin)) {
            List<NewTopic> topics = new ArrayList<>();
            topics.add(new NewTopic(Workload.sentencesTopic(prefix), Workload.SENTENCE_PARTITIONS, (short) -1));
            topics.add(new NewTopic(Workload.leftTopic(prefix), Workload.LEFT_PARTITIONS, (short) -1));
            topics.add(new NewTopic(Workload.rightTopic(prefix), Workload.RIGHT_PARTITIONS, (short) -1));
            for (String protocol : List.of("classic", "streams")) {
                topics.add(new NewTopic(Workload.countsTopic(prefix, protocol), Workload.OUTPUT_PARTITIONS, (short) -1));
                topics.add(new NewTopic(Workload.joinedTopic(prefix, protocol), Workload.OUTPUT_PARTITIONS, (short) -1));
            }
            client.createTopics(topics).all().get(60, TimeUnit.SECONDS);
        }
        Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        long base = System.currentTimeMillis() - 3_600_000L;
        int written = 0;
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(props)) {
            for (int i = 0; i < Workload.SENTENCES; i++) {
                producer.send(new ProducerRecord<>(Workload.sentencesTopic(prefix), "s" + i, Workload.sentence(i)));
                written++;
            }
            for (int i = 0; i < Workload.LEFT; i++) {
                String value = "k" + Workload.leftKey(i) + "|l" + i;
                producer.send(new ProducerRecord<>(Workload.leftTopic(prefix), null, Workload.leftTime(base, i), "l" + i, value));
                written++;
            }
            for (int j = 0; j < Workload.RIGHT; j++) {
                String value = "k" + Workload.rightKey(j) + "|r" + j;
                producer.send(new ProducerRecord<>(Workload.rightTopic(prefix), null, Workload.rightTime(base, j), "r" + j, value));
                written++;
            }
            producer.flush();
        }
        System.out.println("{\"prepared\": " + written + "}");
    }

    /** One application: its protocol, streams instance and progress. */
    private static final class App {
        final String protocol;
        final AtomicLong processed = new AtomicLong();
        KafkaStreams streams;

        App(String protocol) {
            this.protocol = protocol;
        }
    }

    private static void throttle(long millis) {
        if (millis <= 0) {
            return;
        }
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static KafkaStreams build(String bootstrap, String prefix, String stateDir, App app, long throttleMs) {
        String protocol = app.protocol;
        StreamsBuilder builder = new StreamsBuilder();
        KStream<String, String> sentences = builder.stream(Workload.sentencesTopic(prefix));
        sentences
            .peek((k, v) -> {
                app.processed.incrementAndGet();
                throttle(throttleMs);
            })
            .flatMapValues(v -> Arrays.asList(v.split(" ")))
            .groupBy((k, word) -> word)
            .count(Materialized.as("word-counts"))
            .toStream()
            .mapValues(count -> Long.toString(count))
            .to(Workload.countsTopic(prefix, protocol));
        KStream<String, String> left = builder.<String, String>stream(Workload.leftTopic(prefix))
            .peek((k, v) -> {
                app.processed.incrementAndGet();
                throttle(throttleMs);
            })
            .selectKey((k, v) -> v.substring(0, v.indexOf('|')));
        KStream<String, String> right = builder.<String, String>stream(Workload.rightTopic(prefix))
            .peek((k, v) -> {
                app.processed.incrementAndGet();
                throttle(throttleMs);
            })
            .selectKey((k, v) -> v.substring(0, v.indexOf('|')));
        left.join(
                right,
                (l, r) -> l.substring(l.indexOf('|') + 1) + "+" + r.substring(r.indexOf('|') + 1),
                JoinWindows.ofTimeDifferenceAndGrace(Duration.ofMillis(Workload.WINDOW_MS), Duration.ofDays(1)),
                StreamJoined.with(Serdes.String(), Serdes.String(), Serdes.String()).withStoreName("join"))
            .to(Workload.joinedTopic(prefix, protocol));

        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, prefix + "-" + protocol);
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
        props.put(StreamsConfig.GROUP_PROTOCOL_CONFIG, protocol);
        props.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 2);
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 200);
        props.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
        props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir + "/" + protocol);
        props.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        props.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        // The classic protocol's timeouts, short for the test (the streams
        // protocol's are the broker's group.streams.* configs).
        props.put(StreamsConfig.consumerPrefix(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG), 6000);
        props.put(StreamsConfig.consumerPrefix(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG), 500);
        return new KafkaStreams(builder.build(), props);
    }

    private static void run(Map<String, String> options) throws Exception {
        String bootstrap = required(options, "--bootstrap");
        String prefix = required(options, "--prefix");
        String stateDir = required(options, "--state-dir");
        long throttleMs = Long.parseLong(options.getOrDefault("--throttle-ms", "0"));
        boolean untilDone = options.getOrDefault("--until", "done").equals("done");
        long timeoutMs = 1000L * Long.parseLong(options.getOrDefault("--timeout-s", "150"));
        long started = System.currentTimeMillis();
        List<App> apps = new ArrayList<>();
        for (String protocol : options.getOrDefault("--protocols", "classic,streams").split(",")) {
            App app = new App(protocol);
            app.streams = build(bootstrap, prefix, stateDir, app, throttleMs);
            app.streams.setUncaughtExceptionHandler(e -> {
                System.err.println(protocol + ": " + e);
                e.printStackTrace();
                return org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.REPLACE_THREAD;
            });
            apps.add(app);
        }
        Thread reporter = new Thread(() -> {
            while (!Thread.currentThread().isInterrupted()) {
                StringBuilder line = new StringBuilder("{\"progress\": {");
                for (int i = 0; i < apps.size(); i++) {
                    if (i > 0) {
                        line.append(", ");
                    }
                    line.append('"').append(apps.get(i).protocol).append("\": ").append(apps.get(i).processed.get());
                }
                System.out.println(line.append("}}"));
                System.out.flush();
                try {
                    Thread.sleep(100);
                } catch (InterruptedException e) {
                    return;
                }
            }
        });
        reporter.setDaemon(true);
        for (App app : apps) {
            app.streams.start();
        }
        reporter.start();
        if (!untilDone) {
            // The first run: the test kills this JVM mid-run. Should it not,
            // stop after the timeout rather than run forever.
            Thread.sleep(timeoutMs);
            throw new IllegalStateException("the first run was not killed within " + timeoutMs + " ms");
        }
        Map<String, Object> done = new LinkedHashMap<>();
        Map<String, Object> seconds = new LinkedHashMap<>();
        for (App app : apps) {
            done.put(app.protocol, readOutput(bootstrap, prefix, app.protocol, started + timeoutMs));
            seconds.put(app.protocol, (System.currentTimeMillis() - started) / 1000.0);
        }
        reporter.interrupt();
        for (App app : apps) {
            app.streams.close(Duration.ofSeconds(30));
        }
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("done", done);
        result.put("seconds", seconds);
        StringBuilder out = new StringBuilder();
        Json.write(out, result);
        System.out.println(out);
    }

    /**
     * Reads an application's output topics read_committed from the start
     * until they hold the workload's number of records, then half a second
     * more (so that any duplicate shows); fails at the deadline.
     */
    private static Map<String, Object> readOutput(String bootstrap, String prefix, String protocol, long deadline) {
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        String countsTopic = Workload.countsTopic(prefix, protocol);
        String joinedTopic = Workload.joinedTopic(prefix, protocol);
        Map<String, List<Long>> counts = new TreeMap<>();
        List<String> joined = new ArrayList<>();
        int wantCounts = Workload.expectedCounts();
        int wantJoined = Workload.expectedJoined();
        int seen = 0;
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props)) {
            List<TopicPartition> partitions = new ArrayList<>();
            for (String topic : List.of(countsTopic, joinedTopic)) {
                for (int p = 0; p < Workload.OUTPUT_PARTITIONS; p++) {
                    partitions.add(new TopicPartition(topic, p));
                }
            }
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            long settleUntil = Long.MAX_VALUE;
            while (System.currentTimeMillis() < settleUntil) {
                if (System.currentTimeMillis() > deadline) {
                    throw new IllegalStateException(protocol + ": after the deadline the output holds " + seen
                        + " word counts of " + wantCounts + " and " + joined.size() + " joined records of " + wantJoined);
                }
                for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(100))) {
                    if (r.topic().equals(countsTopic)) {
                        counts.computeIfAbsent(r.key(), k -> new ArrayList<>()).add(Long.parseLong(r.value()));
                        seen++;
                    } else {
                        joined.add(r.key() + ":" + r.value());
                    }
                }
                if (settleUntil == Long.MAX_VALUE && seen >= wantCounts && joined.size() >= wantJoined) {
                    settleUntil = System.currentTimeMillis() + 500;
                }
            }
        }
        joined.sort(null);
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("counts", counts);
        out.put("joined", joined);
        return out;
    }
}
