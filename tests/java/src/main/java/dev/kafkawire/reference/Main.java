package dev.kafkawire.reference;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.message.ApiMessageType;
import org.apache.kafka.common.metadata.MetadataRecordType;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.record.internal.MemoryRecords;

/**
 * The JVM side of kafka-wire's reference tests: Apache Kafka's own generated codec, driven in
 * batches so that one JVM serves a whole direction.
 *
 * <pre>
 * generate OUT [INSTANCES [SEED]]   Java to Rust: what the jars hold, then per (message, version)
 *                                   INSTANCES values built from Kafka's classes (bytes and JSON),
 *                                   the values Java refuses to write, Java-built record batches,
 *                                   and Errors.values()
 * check IN OUT                      Rust to Java: reads each message and batch of IN, writes the
 *                                   message back (bytes and JSON) or describes the batches
 * differential IN OUT               Kafka's request and response readers on the (mutated) bodies
 *                                   of IN, one answer line each (see {@link Differential})
 * </pre>
 *
 * The files of generate and check hold one JSON object per line; {@code type} says what each one
 * is.
 */
public final class Main {
    private Main() {}

    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final HexFormat HEX = HexFormat.of();

    public static void main(String[] args) throws Throwable {
        if (args.length >= 2 && args[0].equals("generate")) {
            int instances = args.length > 2 ? Integer.parseInt(args[2]) : 8;
            long seed = args.length > 3 ? Long.parseLong(args[3]) : 19;
            generate(Path.of(args[1]), instances, seed);
        } else if (args.length == 3 && args[0].equals("check")) {
            check(Path.of(args[1]), Path.of(args[2]));
        } else if (args.length == 3 && args[0].equals("differential")) {
            Differential.run(Path.of(args[1]), Path.of(args[2]));
        } else {
            System.err.println("usage: generate OUT [INSTANCES [SEED]] | check IN OUT | differential IN OUT");
            System.exit(2);
        }
    }

    private static Map<String, Schemas.Message> schemas() throws IOException {
        return Schemas.load(ApiMessageType.class, MetadataRecordType.class);
    }

    private static ObjectNode identity(Schemas.Message message, short version) {
        ObjectNode line = MAPPER.createObjectNode();
        line.put("kind", message.kind());
        line.put("name", message.name());
        if (message.apiKey() != null) {
            line.put("apiKey", message.apiKey());
        } else {
            line.putNull("apiKey");
        }
        line.put("version", version);
        return line;
    }

    private static void generate(Path out, int instances, long seed) throws Throwable {
        Map<String, Schemas.Message> schemas = schemas();
        try (BufferedWriter writer = Files.newBufferedWriter(out, StandardCharsets.UTF_8)) {
            ObjectNode listing = MAPPER.createObjectNode();
            listing.put("type", "schemas");
            ArrayNode list = listing.putArray("messages");
            for (Schemas.Message message : schemas.values()) {
                ObjectNode m = identity(message, message.validVersions().lowest());
                m.remove("version");
                m.put("lowest", message.validVersions().lowest());
                m.put("highest", message.validVersions().highest());
                m.put("latestVersionUnstable", message.latestVersionUnstable());
                list.add(m);
            }
            emit(writer, listing);

            for (Schemas.Message message : schemas.values()) {
                for (short v = message.validVersions().lowest(); v <= message.validVersions().highest(); v++) {
                    for (int i = 0; i < instances; i++) {
                        Values.Mode mode = Values.Mode.REGULAR[i % Values.Mode.REGULAR.length];
                        emit(writer, instance(message, v, i, mode, seedFor(seed, message, v, i)));
                    }
                    if (message.hasRecords()) {
                        ObjectNode refusal = refusal(message, v, seedFor(seed, message, v, -1));
                        if (refusal != null) {
                            emit(writer, refusal);
                        }
                    }
                }
            }

            for (Batches.Blob blob : Batches.corpus()) {
                ObjectNode line = MAPPER.createObjectNode();
                line.put("type", "batch");
                line.put("label", blob.label());
                line.put("hex", HEX.formatHex(bytes(blob.records())));
                line.set("describe", Batches.describe(blob.records()));
                emit(writer, line);
            }

            for (Errors error : Errors.values()) {
                ObjectNode line = MAPPER.createObjectNode();
                line.put("type", "error");
                line.put("code", error.code());
                line.put("name", error.name());
                line.put("retriable", error.exception() instanceof RetriableException);
                emit(writer, line);
            }
        }
    }

    private static long seedFor(long seed, Schemas.Message message, short version, int instance) {
        return seed * 1_000_003L + message.name().hashCode() * 8191L + version * 131L + instance;
    }

    private static ObjectNode instance(Schemas.Message message, short version, int instance, Values.Mode mode, long seed) {
        ObjectNode line = identity(message, version);
        line.put("type", "message");
        line.put("instance", instance);
        line.put("mode", mode.label);
        try {
            Message data = (Message) new Values(message, version, mode, seed).build();
            line.put("hex", HEX.formatHex(Codec.write(data, version)));
            line.set("json", Codec.json(data, version, false));
            if (message.hasRecords()) {
                line.set("jsonSerialized", Codec.json(data, version, true));
            }
        } catch (Throwable e) {
            line.put("error", describe(e));
        }
        return line;
    }

    /**
     * A value whose {@code records} fields are all null, when Java refuses to write it (a
     * version where one of them is not nullable); null when Java writes it.
     */
    private static ObjectNode refusal(Schemas.Message message, short version, long seed) throws Throwable {
        Message data = (Message) new Values(message, version, Values.Mode.NULL_RECORDS, seed).build();
        try {
            Codec.write(data, version);
            return null;
        } catch (RuntimeException e) {
            ObjectNode line = identity(message, version);
            line.put("type", "refusal");
            line.put("error", describe(e));
            // The converter cannot count null records where they are not nullable either; with
            // records serialized it writes "" for them, which the Rust side sets back to null.
            line.set("json", Codec.json(data, version, true));
            return line;
        }
    }

    private static void check(Path in, Path out) throws Exception {
        Map<String, Schemas.Message> schemas = schemas();
        Set<String> covered = new HashSet<>();
        try (BufferedReader reader = Files.newBufferedReader(in, StandardCharsets.UTF_8);
                BufferedWriter writer = Files.newBufferedWriter(out, StandardCharsets.UTF_8)) {
            for (String text = reader.readLine(); text != null; text = reader.readLine()) {
                JsonNode input = MAPPER.readTree(text);
                ObjectNode line = input.deepCopy();
                line.remove("hex");
                byte[] bytes = HEX.parseHex(input.path("hex").asText());
                try {
                    if (input.path("type").asText().equals("batch")) {
                        line.set("describe", Batches.describe(MemoryRecords.readableRecords(ByteBuffer.wrap(bytes))));
                    } else {
                        String name = input.path("name").asText();
                        short version = (short) input.path("version").asInt();
                        Schemas.Message message = schemas.get(name);
                        if (message == null || !message.validVersions().contains(version)) {
                            throw new IllegalArgumentException(name + " v" + version + " is not in Kafka's jars");
                        }
                        covered.add(name + " " + version);
                        Message data = Codec.read(message.className(), bytes, version);
                        line.put("hex", HEX.formatHex(Codec.write(data, version)));
                        line.set("json", Codec.json(data, version, false));
                    }
                } catch (Throwable e) {
                    line.put("error", describe(e));
                }
                emit(writer, line);
            }
            ObjectNode coverage = MAPPER.createObjectNode();
            coverage.put("type", "coverage");
            ArrayNode missing = coverage.putArray("notCovered");
            for (Schemas.Message message : schemas.values()) {
                for (short v = message.validVersions().lowest(); v <= message.validVersions().highest(); v++) {
                    if (!covered.contains(message.name() + " " + v)) {
                        missing.add(identity(message, v));
                    }
                }
            }
            emit(writer, coverage);
        }
    }

    private static byte[] bytes(MemoryRecords records) {
        ByteBuffer buffer = records.buffer().duplicate();
        byte[] out = new byte[buffer.remaining()];
        buffer.get(out);
        return out;
    }

    private static String describe(Throwable e) {
        return e.getClass().getSimpleName() + ": " + e.getMessage();
    }

    private static void emit(BufferedWriter writer, JsonNode line) throws IOException {
        writer.write(MAPPER.writeValueAsString(line));
        writer.newLine();
    }
}
