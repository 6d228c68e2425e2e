package dev.kafkawire.junit;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A fake Kafka cluster: {@code kafka-protocol fake} in a child process,
 * driven over its {@code --control} JSON lines. {@link FakeKafka} injects
 * one into tests; {@link #builder()} starts one anywhere else.
 *
 * <p>The child stops when the pipe from this JVM ends ({@code --stop-on-eof}):
 * on {@link #close()}, and also when this JVM dies on any path, since the
 * system closes the pipe then. A shutdown hook closes the clusters still
 * running when the JVM exits.
 */
public final class FakeKafkaCluster implements AutoCloseable {
    private static final int STDERR_LINES = 200;
    private static final String END = new String("end of output");
    private static final Set<FakeKafkaCluster> RUNNING = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            for (FakeKafkaCluster cluster : RUNNING) {
                cluster.process.destroy();
            }
        }, "kafka-wire-fake-shutdown"));
    }

    private final Process process;
    private final Writer stdin;
    private final BlockingQueue<String> stdout = new LinkedBlockingQueue<>();
    private final Deque<String> stderr = new ArrayDeque<>();
    private final Thread stdoutReader;
    private final Thread stderrReader;
    private final Duration controlTimeout;
    private final String bootstrap;
    private volatile String countsLine;
    private long nextId = 1;
    private Map<String, Long> finalCounts;

    /** Settings of a cluster to start. */
    public static final class Builder {
        private int brokers = 3;
        private final List<String> topics = new ArrayList<>();
        private final List<String> faults = new ArrayList<>();
        private Long seed;
        private final List<String> sasl = new ArrayList<>();
        private final List<String> args = new ArrayList<>();
        private boolean firstSequenceFromZero;
        private Duration startTimeout = Duration.ofSeconds(30);
        private Duration controlTimeout = Duration.ofSeconds(30);
        private Path binary;

        private Builder() {}

        /** Brokers, node ids 0 to N-1 (1 to 64; default 3). */
        public Builder brokers(int brokers) {
            this.brokers = brokers;
            return this;
        }

        /** A seed topic of {@code partitions} partitions. */
        public Builder topic(String name, int partitions) {
            topics.add(name + ":" + partitions);
            return this;
        }

        /** Seed topics, {@code "NAME:PARTITIONS"}. */
        public Builder topics(String... topics) {
            this.topics.addAll(Arrays.asList(topics));
            return this;
        }

        /** Fault specs applied from the start ({@code kafka-protocol fake --fault}). */
        public Builder faults(String... specs) {
            faults.addAll(Arrays.asList(specs));
            return this;
        }

        /** Seeds every random choice of the faults. */
        public Builder seed(long seed) {
            this.seed = seed;
            return this;
        }

        /** SASL users, {@code "MECHANISM:USER:PASSWORD"}. */
        public Builder sasl(String... users) {
            sasl.addAll(Arrays.asList(users));
            return this;
        }

        /**
         * Refuse an idempotent producer's first batch on a new partition
         * unless it starts at sequence 0, as Kafka 4.5 does (default: accept
         * any, as Kafka 4.4.0; see {@link FakeKafka#firstSequenceFromZero()}).
         */
        public Builder firstSequenceFromZero(boolean on) {
            firstSequenceFromZero = on;
            return this;
        }

        /** More arguments of {@code kafka-protocol fake}, as they are. */
        public Builder args(String... args) {
            this.args.addAll(Arrays.asList(args));
            return this;
        }

        /** How long to wait for every broker to listen (default 30 s). */
        public Builder startTimeout(Duration timeout) {
            startTimeout = timeout;
            return this;
        }

        /** How long to wait for a control command's answer (default 30 s). */
        public Builder controlTimeout(Duration timeout) {
            controlTimeout = timeout;
            return this;
        }

        /** Another {@code kafka-protocol} binary than the one this jar carries. */
        public Builder binary(Path binary) {
            this.binary = binary;
            return this;
        }

        /** The command line the cluster runs. */
        public List<String> command() {
            List<String> command = new ArrayList<>();
            command.add((binary != null ? binary : NativeBinary.path()).toString());
            command.add("fake");
            command.add("--brokers");
            command.add(Integer.toString(brokers));
            for (String topic : topics) {
                command.add("--topic");
                command.add(topic);
            }
            for (String user : sasl) {
                command.add("--sasl");
                command.add(user);
            }
            for (String fault : faults) {
                command.add("--fault");
                command.add(fault);
            }
            if (seed != null) {
                command.add("--seed");
                command.add(Long.toString(seed));
            }
            if (firstSequenceFromZero) {
                command.add("--first-sequence-from-zero");
            }
            command.addAll(args);
            command.add("--control");
            command.add("--stop-on-eof");
            return command;
        }

        /** Starts the cluster; returns once every broker listens. */
        public FakeKafkaCluster start() {
            return new FakeKafkaCluster(command(), startTimeout, controlTimeout);
        }
    }

    /** Settings for a cluster to start. */
    public static Builder builder() {
        return new Builder();
    }

    /** The settings of {@code annotation}. */
    static Builder builder(FakeKafka annotation) {
        Builder builder = builder()
                .brokers(annotation.brokers())
                .topics(annotation.topics())
                .faults(annotation.faults())
                .sasl(annotation.sasl())
                .firstSequenceFromZero(annotation.firstSequenceFromZero())
                .args(annotation.args());
        return builder.seed(annotation.seed());
    }

    private FakeKafkaCluster(List<String> command, Duration startTimeout, Duration controlTimeout) {
        this.controlTimeout = controlTimeout;
        this.process = spawn(command);
        RUNNING.add(this);
        this.stdin = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
        this.stdoutReader = reader("stdout", process.getInputStream(), line -> stdout.add(line), () -> stdout.add(END));
        this.stderrReader = reader("stderr", process.getErrorStream(), this::keepStderr, () -> { });
        String first;
        try {
            first = stdout.poll(startTimeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            kill();
            throw new FakeKafkaException("interrupted while the cluster started", e);
        }
        if (first == null) {
            kill();
            throw new FakeKafkaException("kafka-protocol fake printed no bootstrap line in " + startTimeout,
                    null, stderrText());
        }
        if (first == END || !first.startsWith("bootstrap ")) {
            Integer code = finish(Duration.ofSeconds(5));
            throw new FakeKafkaException(errorMessage("kafka-protocol fake did not start (exit status " + code + ")"),
                    code, stderrText());
        }
        this.bootstrap = first.substring("bootstrap ".length()).trim();
    }

    private static Process spawn(List<String> command) {
        ProcessBuilder builder = new ProcessBuilder(command);
        for (int attempt = 1; ; attempt++) {
            try {
                return builder.start();
            } catch (IOException e) {
                // A binary just extracted can be busy for a moment while a
                // process forked meanwhile still holds it open for writing.
                String message = String.valueOf(e.getMessage());
                if (attempt < 20 && message.contains("Text file busy")) {
                    try {
                        Thread.sleep(50);
                    } catch (InterruptedException interrupted) {
                        Thread.currentThread().interrupt();
                        throw new FakeKafkaException("interrupted while the cluster started", interrupted);
                    }
                    continue;
                }
                throw new FakeKafkaException("cannot run " + command.get(0) + ": " + message, e);
            }
        }
    }

    private interface LineSink {
        void line(String line);
    }

    private static Thread reader(String name, java.io.InputStream stream, LineSink sink, Runnable atEnd) {
        Thread thread = new Thread(() -> {
            try (BufferedReader lines = new BufferedReader(new InputStreamReader(stream, StandardCharsets.UTF_8))) {
                String line;
                while ((line = lines.readLine()) != null) {
                    sink.line(line);
                }
            } catch (IOException ignored) {
                // the process is gone: its end is reported below
            } finally {
                atEnd.run();
            }
        }, "kafka-wire-fake-" + name);
        thread.setDaemon(true);
        thread.start();
        return thread;
    }

    private void keepStderr(String line) {
        if (line.startsWith("faults ")) {
            countsLine = line;
        }
        synchronized (stderr) {
            stderr.addLast(line);
            if (stderr.size() > STDERR_LINES) {
                stderr.removeFirst();
            }
        }
    }

    private String stderrText() {
        synchronized (stderr) {
            return String.join("\n", stderr);
        }
    }

    /** The command's own error: its {@code error:} line and what follows, without clap's closing hint. */
    private String errorMessage(String fallback) {
        List<String> lines;
        synchronized (stderr) {
            lines = new ArrayList<>(stderr);
        }
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).startsWith("error:")) {
                StringBuilder message = new StringBuilder();
                for (String line : lines.subList(i, lines.size())) {
                    if (line.trim().isEmpty() || line.startsWith("For more information")) {
                        continue;
                    }
                    if (message.length() > 0) {
                        message.append('\n');
                    }
                    message.append(line);
                }
                return message.toString();
            }
        }
        return lines.isEmpty() ? fallback : fallback + ": " + String.join("\n", lines);
    }

    /** {@code host:port,...} of every broker, for {@code bootstrap.servers}. */
    public String bootstrap() {
        return bootstrap;
    }

    /** The process id of {@code kafka-protocol fake}. */
    public long pid() {
        return process.pid();
    }

    /** Whether the cluster's process is running. */
    public boolean isRunning() {
        return process.isAlive();
    }

    /**
     * Injects a fault from now on ({@code kafka-protocol fake --fault}'s
     * grammar); a request fault's control id, for
     * {@code control("remove", "control", id)}.
     */
    public OptionalLong fault(String spec) {
        Object control = control("fault", "spec", spec).get("control");
        return control instanceof Number ? OptionalLong.of(((Number) control).longValue()) : OptionalLong.empty();
    }

    /**
     * Sends one control command with its fields, given as name and value
     * in turn: {@code control("move-leader", "topic", "orders", "partition", 0)}.
     * Returns the answer's fields. A refused command throws
     * {@link ControlException} with the cluster's message.
     */
    public Map<String, Object> control(String command, Object... fieldsAndValues) {
        if (fieldsAndValues.length % 2 != 0) {
            throw new IllegalArgumentException("fields come as name and value in turn");
        }
        Map<String, Object> message = new LinkedHashMap<>();
        message.put("cmd", command);
        for (int i = 0; i < fieldsAndValues.length; i += 2) {
            message.put(String.valueOf(fieldsAndValues[i]), fieldsAndValues[i + 1]);
        }
        return control(message);
    }

    /**
     * Sends one control command (its {@code cmd} and fields, as
     * {@code kafka-protocol fake --control} takes them) and returns the
     * answer's fields.
     */
    public synchronized Map<String, Object> control(Map<String, ?> command) {
        if (!(command.get("cmd") instanceof String)) {
            throw new IllegalArgumentException("a control command needs `cmd`");
        }
        if (finalCounts != null) {
            throw new FakeKafkaException("the cluster is stopped", process.exitValue(), stderrText());
        }
        Map<String, Object> message = new LinkedHashMap<>(command);
        long id = nextId++;
        message.put("id", id);
        String line = Json.write(message);
        String answerLine;
        try {
            stdin.write(line);
            stdin.write('\n');
            stdin.flush();
            answerLine = stdout.poll(controlTimeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (IOException e) {
            throw gone();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new FakeKafkaException("interrupted while waiting for an answer", e);
        }
        if (answerLine == null) {
            throw new FakeKafkaException("no answer to " + command.get("cmd") + " in " + controlTimeout, null,
                    stderrText());
        }
        if (answerLine == END) {
            stdout.add(END);
            throw gone();
        }
        Object parsed = Json.parse(answerLine);
        if (!(parsed instanceof Map)) {
            throw new FakeKafkaException("not an answer: " + answerLine, null, stderrText());
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> answer = (Map<String, Object>) parsed;
        Object answeredId = answer.get("id");
        if (!(answeredId instanceof Number) || ((Number) answeredId).longValue() != id) {
            throw new FakeKafkaException("an answer out of turn: " + answerLine, null, stderrText());
        }
        if (answer.containsKey("error")) {
            throw new ControlException(String.valueOf(answer.get("error")), line);
        }
        answer.remove("id");
        answer.remove("ok");
        return answer;
    }

    /**
     * The faults injected so far, by kind: {@code error}, {@code delay},
     * {@code hang}, {@code drop-before}, {@code drop-after},
     * {@code move-leaders}, {@code move-coordinator}, {@code stop-broker},
     * {@code restart-broker}, and {@code drop-after-records}.
     */
    public Map<String, Long> injected() {
        Object faults = control("counts").get("faults");
        Map<String, Long> counts = new LinkedHashMap<>();
        if (faults instanceof Map) {
            for (Map.Entry<?, ?> entry : ((Map<?, ?>) faults).entrySet()) {
                counts.put(String.valueOf(entry.getKey()), ((Number) entry.getValue()).longValue());
            }
        }
        return Collections.unmodifiableMap(counts);
    }

    /**
     * Stops the cluster and returns the faults it injected (as
     * {@link #injected()}); again, the same counts.
     */
    public synchronized Map<String, Long> stop() {
        if (finalCounts != null) {
            return finalCounts;
        }
        Integer code = finish(Duration.ofSeconds(10));
        String line = countsLine;
        if (line == null) {
            throw new FakeKafkaException(errorMessage("kafka-protocol fake ended with exit status " + code), code,
                    stderrText());
        }
        finalCounts = Collections.unmodifiableMap(parseFaultCounts(line));
        return finalCounts;
    }

    /** Stops the cluster; unlike {@link #stop()}, never throws for a cluster that had already died. */
    @Override
    public void close() {
        try {
            stop();
        } catch (FakeKafkaException ignored) {
            // it stopped, which is all close promises
        }
    }

    /** The counts of a {@code faults error=2,delay=0,...} line, by kind. */
    static Map<String, Long> parseFaultCounts(String line) {
        Map<String, Long> counts = new LinkedHashMap<>();
        String body = line.trim();
        if (body.startsWith("faults ")) {
            body = body.substring("faults ".length());
        }
        for (String item : body.split(",")) {
            int eq = item.indexOf('=');
            if (eq > 0) {
                try {
                    counts.put(item.substring(0, eq), Long.parseLong(item.substring(eq + 1)));
                } catch (NumberFormatException ignored) {
                    // not a count
                }
            }
        }
        return counts;
    }

    private FakeKafkaException gone() {
        Integer code = finish(Duration.ofSeconds(5));
        return new FakeKafkaException(errorMessage("kafka-protocol fake has exited (exit status " + code + ")"), code,
                stderrText());
    }

    /** Ends the input (the child stops on it), waits, then terminates and kills if it must. */
    private Integer finish(Duration timeout) {
        try {
            try {
                stdin.close();
            } catch (IOException ignored) {
                // already closed, or the child is gone
            }
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroy();
                if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                    process.destroyForcibly().waitFor();
                }
            }
            stdoutReader.join(timeout.toMillis());
            stderrReader.join(timeout.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        } finally {
            RUNNING.remove(this);
        }
        return process.isAlive() ? null : process.exitValue();
    }

    private void kill() {
        process.destroyForcibly();
        RUNNING.remove(this);
    }

    @Override
    public String toString() {
        return "FakeKafkaCluster[" + bootstrap + (isRunning() ? ", running]" : ", stopped]");
    }
}
