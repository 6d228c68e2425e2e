package dev.kafkawire.reference;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.SplittableRandom;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.message.KRaftVersionRecord;
import org.apache.kafka.common.message.LeaderChangeMessage;
import org.apache.kafka.common.message.SnapshotFooterRecord;
import org.apache.kafka.common.message.SnapshotHeaderRecord;
import org.apache.kafka.common.message.VotersRecord;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.AbstractLegacyRecordBatch;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.DefaultRecord;
import org.apache.kafka.common.record.internal.EndTransactionMarker;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.record.internal.RecordBatch;

/**
 * Record batches written by Kafka's {@link MemoryRecordsBuilder}, and the description of a
 * records blob as Kafka's own iteration sees it ({@link #describe}), which both directions
 * compare with what kafka-wire sees.
 */
final class Batches {
    private Batches() {}

    private static final JsonNodeFactory JSON = JsonNodeFactory.instance;

    static final String[] CODECS = {"none", "gzip", "snappy", "lz4", "zstd"};

    static Compression codec(String name) {
        return switch (name) {
            case "none" -> Compression.NONE;
            case "gzip" -> Compression.gzip().build();
            case "snappy" -> Compression.snappy().build();
            case "lz4" -> Compression.lz4().build();
            case "zstd" -> Compression.zstd().build();
            default -> throw new IllegalArgumentException(name);
        };
    }

    /** One named blob of batches. */
    record Blob(String label, MemoryRecords records) {}

    /** A records value for a message field: one or two small v2 batches, of random codecs. */
    static MemoryRecords forMessage(SplittableRandom random) {
        ByteBuffer out = ByteBuffer.allocate(64 * 1024);
        long offset = random.nextInt(1000);
        for (int b = 0, batches = 1 + random.nextInt(2); b < batches; b++) {
            String codec = CODECS[random.nextInt(CODECS.length)];
            MemoryRecordsBuilder builder = MemoryRecords.builder(out, RecordBatch.MAGIC_VALUE_V2, codec(codec),
                    TimestampType.CREATE_TIME, offset);
            int count = 1 + random.nextInt(3);
            for (int i = 0; i < count; i++) {
                builder.append(1_700_000_000_000L + random.nextInt(100_000),
                        text("key-" + i), text("value ✓ " + random.nextInt()),
                        new Header[] {new RecordHeader("h", text("v" + i))});
            }
            builder.close();
            out = builder.buffer();
            offset += count;
        }
        out.flip();
        return MemoryRecords.readableRecords(out);
    }

    /** The Java-built corpus: every codec, each magic, headers, producer state, control batches. */
    static List<Blob> corpus() {
        List<Blob> blobs = new ArrayList<>();
        SplittableRandom random = new SplittableRandom(19);
        for (String codec : CODECS) {
            blobs.add(v2(codec + ": create time, headers, null and empty keys and values", codec,
                    TimestampType.CREATE_TIME, 0, -1, (short) -1, -1, false, 7, random, 4));
            blobs.add(v2(codec + ": log append time", codec, TimestampType.LOG_APPEND_TIME,
                    1_000, -1, (short) -1, -1, false, -1, random, 3));
            blobs.add(v2(codec + ": idempotent producer", codec, TimestampType.CREATE_TIME,
                    42, 987_654_321L, (short) 3, 17, false, 12, random, 5));
            blobs.add(v2(codec + ": transactional", codec, TimestampType.CREATE_TIME,
                    Integer.MAX_VALUE + 10L, Long.MAX_VALUE - 1, Short.MAX_VALUE, Integer.MAX_VALUE - 2,
                    true, 0, random, 3));
            blobs.add(v2(codec + ": 300 records, wide deltas", codec, TimestampType.CREATE_TIME,
                    5, -1, (short) -1, -1, false, 2, random, 300));
            if (!codec.equals("zstd")) {
                blobs.add(legacy(codec + ": magic 0", codec, RecordBatch.MAGIC_VALUE_V0,
                        TimestampType.NO_TIMESTAMP_TYPE, 10, random, 3));
                blobs.add(legacy(codec + ": magic 1, create time", codec, RecordBatch.MAGIC_VALUE_V1,
                        TimestampType.CREATE_TIME, 20, random, 3));
                blobs.add(legacy(codec + ": magic 1, log append time", codec, RecordBatch.MAGIC_VALUE_V1,
                        TimestampType.LOG_APPEND_TIME, 30, random, 2));
            }
        }
        blobs.add(new Blob("control: commit marker", MemoryRecords.withEndTransactionMarker(
                100, 1_700_000_000_123L, 4, 5_000L, (short) 2,
                new EndTransactionMarker(ControlRecordType.COMMIT, 9))));
        blobs.add(new Blob("control: abort marker", MemoryRecords.withEndTransactionMarker(
                101, 1_700_000_000_456L, 4, 5_000L, (short) 2,
                new EndTransactionMarker(ControlRecordType.ABORT, 10))));
        blobs.add(new Blob("control: leader change", MemoryRecords.withLeaderChangeMessage(
                200, 1_700_000_001_000L, 6, ByteBuffer.allocate(1024),
                new LeaderChangeMessage().setVersion((short) 0).setLeaderId(3)
                        .setVoters(List.of(new LeaderChangeMessage.Voter().setVoterId(3)))
                        .setGrantingVoters(List.of(new LeaderChangeMessage.Voter().setVoterId(3))))));
        blobs.add(kraftControl());
        blobs.add(mixed(random));
        return blobs;
    }

    private static Blob v2(String label, String codec, TimestampType timestampType, long baseOffset,
            long producerId, short producerEpoch, int baseSequence, boolean transactional,
            int partitionLeaderEpoch, SplittableRandom random, int count) {
        ByteBuffer buffer = ByteBuffer.allocate(1 << 20);
        MemoryRecordsBuilder builder = MemoryRecords.builder(buffer, RecordBatch.MAGIC_VALUE_V2, codec(codec),
                timestampType, baseOffset, 1_700_000_999_000L, producerId, producerEpoch, baseSequence,
                transactional, false, partitionLeaderEpoch);
        long timestamp = 1_700_000_000_000L;
        for (int i = 0; i < count; i++) {
            byte[] key = switch (i % 4) {
                case 0 -> text("key-" + i);
                case 1 -> null;
                case 2 -> new byte[0];
                default -> text("ключ " + i);
            };
            byte[] value = switch (i % 5) {
                case 0 -> text("value ✓ " + i);
                case 1 -> new byte[0];
                case 2 -> null;
                case 3 -> bytes(random, 200 + random.nextInt(300));
                default -> text("x".repeat(1000));
            };
            Header[] headers = switch (i % 3) {
                case 0 -> new Header[0];
                case 1 -> new Header[] {new RecordHeader("trace", text("abc")), new RecordHeader("null", null)};
                default -> new Header[] {new RecordHeader("é✓🦀", new byte[0])};
            };
            // Timestamps move both ways, so that deltas are negative too.
            timestamp += random.nextInt(-5_000, 1_000_000);
            builder.appendWithOffset(baseOffset + i, timestamp, key, value, headers);
        }
        return new Blob(label, builder.build());
    }

    private static Blob legacy(String label, String codec, byte magic, TimestampType timestampType,
            long baseOffset, SplittableRandom random, int count) {
        ByteBuffer buffer = ByteBuffer.allocate(64 * 1024);
        MemoryRecordsBuilder builder = MemoryRecords.builder(buffer, magic, codec(codec), timestampType,
                baseOffset, 1_600_000_999_000L);
        for (int i = 0; i < count; i++) {
            byte[] key = i == 1 ? null : text("legacy-key-" + i);
            byte[] value = i == 2 ? null : bytes(random, 1 + random.nextInt(40));
            builder.appendWithOffset(baseOffset + i, 1_600_000_000_000L + 1000L * i, key, value);
        }
        return new Blob(label, builder.build());
    }

    /** The control records of KRaft snapshots, in one control batch. */
    private static Blob kraftControl() {
        ByteBuffer buffer = ByteBuffer.allocate(4096);
        MemoryRecordsBuilder builder = MemoryRecords.builder(buffer, RecordBatch.MAGIC_VALUE_V2, Compression.NONE,
                TimestampType.CREATE_TIME, 0, 1_700_000_002_000L, -1, (short) -1, -1, false, true, 8);
        builder.appendSnapshotHeaderMessage(1_700_000_002_000L,
                new SnapshotHeaderRecord().setVersion((short) 0).setLastContainedLogTimestamp(77));
        builder.appendKRaftVersionMessage(1_700_000_002_001L,
                new KRaftVersionRecord().setVersion((short) 0).setKRaftVersion((short) 1));
        builder.appendVotersMessage(1_700_000_002_002L, new VotersRecord().setVersion((short) 0));
        builder.appendSnapshotFooterMessage(1_700_000_002_003L, new SnapshotFooterRecord().setVersion((short) 0));
        return new Blob("control: KRaft snapshot header, version, voters and footer", builder.build());
    }

    /** Several batches of different magics and codecs back to back, as a fetch response holds them. */
    private static Blob mixed(SplittableRandom random) {
        List<MemoryRecords> parts = List.of(
                legacy("", "gzip", RecordBatch.MAGIC_VALUE_V1, TimestampType.CREATE_TIME, 0, random, 2).records(),
                v2("", "zstd", TimestampType.CREATE_TIME, 2, -1, (short) -1, -1, false, 1, random, 3).records(),
                MemoryRecords.withEndTransactionMarker(5, 1_700_000_000_000L, 1, 77L, (short) 0,
                        new EndTransactionMarker(ControlRecordType.COMMIT, 1)),
                v2("", "lz4", TimestampType.LOG_APPEND_TIME, 6, 77L, (short) 0, 0, true, 1, random, 2).records());
        int size = parts.stream().mapToInt(MemoryRecords::sizeInBytes).sum();
        ByteBuffer out = ByteBuffer.allocate(size);
        for (MemoryRecords part : parts) {
            out.put(part.buffer().duplicate());
        }
        out.flip();
        return new Blob("mixed: magic 1 gzip, zstd, a commit marker, transactional lz4", MemoryRecords.readableRecords(out));
    }

    /**
     * How Kafka sees a blob: every batch (for magic 0 and 1, every shallow entry) after {@code
     * ensureValid}, with its header fields and its records.
     */
    static ObjectNode describe(MemoryRecords records) {
        ObjectNode out = JSON.objectNode();
        ArrayNode batches = out.putArray("batches");
        int consumed = 0;
        for (MutableRecordBatch batch : records.batches()) {
            batch.ensureValid();
            consumed += batch.sizeInBytes();
            ObjectNode b = batches.addObject();
            b.put("magic", batch.magic());
            b.put("baseOffset", batch.baseOffset());
            b.put("lastOffset", batch.lastOffset());
            b.put("partitionLeaderEpoch", batch.partitionLeaderEpoch());
            b.put("attributes", attributes(batch));
            b.put("compression", batch.compressionType().id);
            b.put("timestampType", batch.timestampType().id);
            b.put("maxTimestamp", batch.maxTimestamp());
            b.put("transactional", batch.isTransactional());
            b.put("control", batch.isControlBatch());
            b.put("producerId", batch.producerId());
            b.put("producerEpoch", batch.producerEpoch());
            b.put("baseSequence", batch.baseSequence());
            b.put("crc", batch.checksum());
            b.put("size", batch.sizeInBytes());
            ArrayNode list = b.putArray("records");
            for (Record record : batch) {
                record.ensureValid();
                ObjectNode r = list.addObject();
                r.put("offset", record.offset());
                r.put("timestamp", record.timestamp());
                r.put("attributes", recordAttributes(record));
                r.set("key", record.hasKey() ? JSON.textNode(base64(record.key())) : JSON.nullNode());
                r.set("value", record.hasValue() ? JSON.textNode(base64(record.value())) : JSON.nullNode());
                ArrayNode headers = r.putArray("headers");
                for (Header header : record.headers()) {
                    ObjectNode h = headers.addObject();
                    h.put("key", header.key());
                    h.set("value", header.value() == null ? JSON.nullNode()
                            : JSON.textNode(Base64.getEncoder().encodeToString(header.value())));
                }
                if (batch.isControlBatch()) {
                    r.put("controlType", ControlRecordType.parseTypeId(record.key()));
                } else {
                    r.putNull("controlType");
                }
            }
        }
        if (consumed != records.sizeInBytes()) {
            throw new IllegalStateException("batches cover " + consumed + " of " + records.sizeInBytes() + " bytes");
        }
        return out;
    }

    /** The batch attributes, as Kafka's accessors state them. */
    private static int attributes(RecordBatch batch) {
        if (batch instanceof AbstractLegacyRecordBatch legacy) {
            return legacy.outerRecord().attributes();
        }
        int attributes = batch.compressionType().id;
        if (batch.timestampType() == TimestampType.LOG_APPEND_TIME) {
            attributes |= 0x08;
        }
        if (batch.isTransactional()) {
            attributes |= 0x10;
        }
        if (batch.isControlBatch()) {
            attributes |= 0x20;
        }
        if (batch.deleteHorizonMs().isPresent()) {
            attributes |= 0x40;
        }
        return attributes;
    }

    private static int recordAttributes(Record record) {
        if (record instanceof DefaultRecord d) {
            return d.attributes();
        }
        if (record instanceof AbstractLegacyRecordBatch legacy) {
            return legacy.outerRecord().attributes();
        }
        throw new IllegalStateException("a record of " + record.getClass());
    }

    private static String base64(ByteBuffer buffer) {
        byte[] bytes = new byte[buffer.remaining()];
        buffer.duplicate().get(bytes);
        return Base64.getEncoder().encodeToString(bytes);
    }

    private static byte[] text(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] bytes(SplittableRandom random, int length) {
        byte[] out = new byte[length];
        for (int i = 0; i < length; i++) {
            // Half random, half repeated, so that compression has something to do.
            out[i] = i % 2 == 0 ? (byte) random.nextInt(256) : (byte) 'k';
        }
        return out;
    }
}
